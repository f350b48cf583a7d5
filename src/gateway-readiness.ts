import { sql } from 'kysely';
import type { Readiness } from './http/routes/health-route.js';
import type { SharedState } from './state/index.js';
import type { Stores } from './store/index.js';

/** Longest a dependency may take to answer `/ready`'s check before it counts as down. */
const CHECK_TIMEOUT_MS = 1_000;
/** A check's answer is reused this long: `/ready` has no authentication, and a flood of it must not become a flood of queries. */
const CHECK_REUSE_MS = 1_000;
/** Read from the shared state by the check: any key does, the answer is what counts. */
const PROBE_KEY = 'ready-probe';

export interface ReadinessSources {
  /** The process is draining (SIGTERM): not ready, whatever its dependencies say. */
  draining: () => boolean;
  stores: Stores;
  state: SharedState;
  /** Under `serve --workers`: whether every worker of this host listens (the primary says); not ready until then. */
  peersListening?: () => boolean;
  /** With Redis, whether the request path's breaker holds the state for down (no query needed then). */
  stateDeclaredDown?: () => boolean;
  now?: () => number;
}

/**
 * What `GET /ready` answers: `draining` after SIGTERM; `unavailable` when the database or the
 * shared state does not answer a trivial query within a second, or a worker of this host does not
 * listen; else `ready`. At most one check
 * runs at a time, and its answer serves every probe for a second.
 */
export function readinessCheck(sources: ReadinessSources): () => Promise<Readiness> {
  const now = sources.now ?? Date.now;
  let last: { at: number; answered: boolean } | null = null;
  let pending: Promise<boolean> | null = null;
  const dependenciesAnswer = (): Promise<boolean> =>
    withTimeout(Promise.all([sql`select 1`.execute(sources.stores.database.db), sources.state.get(PROBE_KEY)]), CHECK_TIMEOUT_MS).then(
      () => true,
      () => false,
    );
  return async () => {
    if (sources.draining()) return 'draining';
    if (sources.stateDeclaredDown?.() === true || sources.peersListening?.() === false) return 'unavailable';
    if (last === null || now() - last.at >= CHECK_REUSE_MS) {
      pending ??= dependenciesAnswer().then((answered) => {
        last = { at: now(), answered };
        pending = null;
        return answered;
      });
      await pending;
    }
    if (sources.draining()) return 'draining';
    return last?.answered === true ? 'ready' : 'unavailable';
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

import { MemoryState, type MemoryStateOptions } from './memory-state.js';
import { RedisState, type RedisStateOptions } from './redis-state.js';
import type { SharedState } from './shared-state.js';

/**
 * What a backend may be given besides its URL: the memory backend's clock and sweep interval, the
 * Redis backend's key prefix and timeouts. Each backend ignores the other's.
 */
export type OpenStateOptions = MemoryStateOptions & RedisStateOptions;

const ACCEPTED_FORMS = '"memory", "redis://…" or "rediss://…"';

/**
 * Opens the shared state named by `state.url`: `memory` (this process only) or Redis
 * (`redis://…`, `rediss://…` with TLS), shared by every gateway using it. Chosen once at start;
 * callers see only SharedState. A Redis that cannot be reached within `connectTimeoutMs` is an
 * error here, at start, rather than a gateway that fails on every request; once started, an
 * outage makes operations fail fast while it reconnects.
 */
export async function openState(url: string, options: OpenStateOptions = {}): Promise<SharedState> {
  const { now, sweepIntervalMs, ...redisOptions } = options;
  if (url === 'memory') return new MemoryState({ now, sweepIntervalMs });
  if (url.startsWith('redis://') || url.startsWith('rediss://')) {
    try {
      return await RedisState.open(url, redisOptions);
    } catch (error) {
      // RedisState's messages never carry the password; a TypeError is a bad option, said as is.
      if (error instanceof TypeError) throw error;
      throw new Error(`state.url: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new Error(`state.url must be ${ACCEPTED_FORMS}, got ${describeUrl(url)}`);
}

/** Names the scheme only: a URL may carry a password, and error messages end up in logs. */
function describeUrl(url: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  if (scheme !== undefined) return `a "${scheme}:" URL`;
  return url.length <= 40 ? JSON.stringify(url) : `${JSON.stringify(url.slice(0, 40))}…`;
}

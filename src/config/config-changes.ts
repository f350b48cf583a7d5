import { isDeepStrictEqual } from 'node:util';
import type { SwitchyardConfig } from './config-schema.js';

/** What a reload found different between the running config and the file: key paths, never values. */
export interface ConfigChanges {
  /** Applied by a reload, e.g. `upstreams[1].api_key changed`, `models[2] added`. */
  readonly applied: readonly string[];
  /** Read once at start: these wait for a restart, e.g. `server.port changed`. */
  readonly needsRestart: readonly string[];
}

/**
 * The keys a reload applies: the upstreams (their keys and settings, `max_in_flight`), the models
 * (routes, prices) and the log level. Everything else is wired into what was built at start (the
 * listening socket, the database, the shared state, the router's settings) and needs a restart.
 */
const RELOADABLE = ['upstreams', 'models', 'logging.level'];

/** One difference: where, and whether it was added, removed or changed there. */
interface Difference {
  path: string;
  what: 'added' | 'removed' | 'changed';
}

function reloadable({ path }: Difference): boolean {
  return RELOADABLE.some((key) => path === key || path.startsWith(`${key}.`) || path.startsWith(`${key}[`));
}

/** The paths where `next` differs from `running`, split into what a reload applies and what needs a restart. */
export function configChanges(running: SwitchyardConfig, next: SwitchyardConfig): ConfigChanges {
  const differences: Difference[] = [];
  collect(running, next, '', differences);
  const said = ({ path, what }: Difference): string => `${path} ${what}`;
  return {
    applied: differences.filter((difference) => reloadable(difference)).map(said),
    needsRestart: differences.filter((difference) => !reloadable(difference)).map(said),
  };
}

/** `running` with what a reload applies taken from `next`; the rest stays as it was started. */
export function reloadedConfig(running: SwitchyardConfig, next: SwitchyardConfig): SwitchyardConfig {
  return { ...running, upstreams: next.upstreams, models: next.models, logging: { ...running.logging, level: next.logging.level } };
}

function collect(before: unknown, after: unknown, path: string, into: Difference[]): void {
  if (isDeepStrictEqual(before, after)) return;
  if (Array.isArray(before) && Array.isArray(after)) {
    for (let index = 0; index < Math.max(before.length, after.length); index++) {
      const item = `${path}[${index}]`;
      if (index >= before.length) into.push({ path: item, what: 'added' });
      else if (index >= after.length) into.push({ path: item, what: 'removed' });
      else collect(before[index], after[index], item, into);
    }
    return;
  }
  if (isRecord(before) && isRecord(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const child = path === '' ? key : `${path}.${key}`;
      if (!(key in after)) into.push({ path: child, what: 'removed' });
      else if (!(key in before)) into.push({ path: child, what: 'added' });
      else collect(before[key], after[key], child, into);
    }
    return;
  }
  into.push({ path, what: 'changed' });
}

/** A plain mapping of keys; anything else (a certificate's bytes, a value) is compared whole. */
function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype;
}

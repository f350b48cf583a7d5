import { MemoryState, type MemoryStateOptions } from './memory-state.js';
import type { SharedState } from './shared-state.js';

/** What a backend may be given besides its URL; the memory backend's clock and sweep interval. */
export type OpenStateOptions = MemoryStateOptions;

const ACCEPTED_FORMS = '"memory", "redis://…" or "rediss://…"';

/**
 * Opens the shared state named by `state.url`: `memory` (this process only) or, once it exists,
 * Redis (`redis://…`, `rediss://…` with TLS). Chosen once at start; callers see only SharedState.
 */
export async function openState(url: string, options: OpenStateOptions = {}): Promise<SharedState> {
  if (url === 'memory') return new MemoryState(options);
  if (url.startsWith('redis://') || url.startsWith('rediss://')) {
    throw new Error('state.url: the Redis state backend arrives with the rate-limit work; use state.url "memory" until then');
  }
  throw new Error(`state.url must be ${ACCEPTED_FORMS}, got ${describeUrl(url)}`);
}

/** Names the scheme only: a URL may carry a password, and error messages end up in logs. */
function describeUrl(url: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  if (scheme !== undefined) return `a "${scheme}:" URL`;
  return url.length <= 40 ? JSON.stringify(url) : `${JSON.stringify(url.slice(0, 40))}…`;
}

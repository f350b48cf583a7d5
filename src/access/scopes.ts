export const SCOPES = ['models:read', 'chat', 'native', 'embeddings', 'rerank', 'audio:transcribe', 'audio:speak', 'admin', 'metrics'] as const;
export type Scope = (typeof SCOPES)[number];

/** Scopes a new token gets only when asked for: the admin API, and `/metrics` (what every team's traffic looks like). */
const OPERATOR_SCOPES: ReadonlySet<Scope> = new Set(['admin', 'metrics']);

/** A new token gets every scope but the operators' (`admin`, `metrics`) unless `--scopes` says otherwise. */
export const DEFAULT_SCOPES: readonly Scope[] = SCOPES.filter((scope) => !OPERATOR_SCOPES.has(scope));

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

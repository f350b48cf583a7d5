export const SCOPES = ['models:read', 'chat', 'native', 'embeddings', 'rerank', 'audio:transcribe', 'audio:speak', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** A new token gets every scope but `admin` unless `--scopes` says otherwise. */
export const DEFAULT_SCOPES: readonly Scope[] = SCOPES.filter((scope) => scope !== 'admin');

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

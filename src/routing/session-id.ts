/**
 * Where a session id came from (`X-Session-Source`); `native` arrives with the native endpoint,
 * `previous_response_id` and `prompt_cache_key` with `/v1/responses`.
 */
export type SessionSource =
  | 'header'
  | 'metadata.session_id'
  | 'metadata.sticky_key'
  | 'inferred'
  | 'native'
  | 'previous_response_id'
  | 'prompt_cache_key'
  | 'claude_code'
  | 'metadata.user_id';

export interface SessionIdentity {
  id: string;
  source: SessionSource;
}

const MAX_SESSION_ID_LENGTH = 256;

/**
 * The session a request belongs to, by the spec's precedence: the `X-Session-Id` header, then
 * `metadata.session_id`, then `metadata.sticky_key`. Empty values do not count.
 */
export function resolveSession(header: string | string[] | undefined, metadata: unknown): SessionIdentity | null {
  const fromHeader = usable(Array.isArray(header) ? header[0] : header);
  if (fromHeader !== null) return { id: fromHeader, source: 'header' };
  if (metadata === null || typeof metadata !== 'object') return null;
  const { session_id: sessionId, sticky_key: stickyKey } = metadata as Record<string, unknown>;
  const fromSessionId = usable(sessionId);
  if (fromSessionId !== null) return { id: fromSessionId, source: 'metadata.session_id' };
  const fromStickyKey = usable(stickyKey);
  if (fromStickyKey !== null) return { id: fromStickyKey, source: 'metadata.sticky_key' };
  return null;
}

/**
 * The session a native (Codex) request belongs to: `X-Session-Id`, else Codex's own session id —
 * its `session-id` header (`session_id` before 0.1xx), else the body's `prompt_cache_key`, which
 * Codex sets to the same id and keeps across turns and resumes.
 */
export function resolveNativeSession(headers: Readonly<Record<string, string | string[] | undefined>>, promptCacheKey: unknown): SessionIdentity | null {
  const named = resolveSession(headers['x-session-id'], undefined);
  if (named !== null) return named;
  const native = usable(first(headers['session-id'])) ?? usable(first(headers['session_id'])) ?? usable(promptCacheKey);
  return native === null ? null : { id: native, source: 'native' };
}

/**
 * The session a Messages request belongs to: `X-Session-Id`, else Claude Code's own session id —
 * its `x-claude-code-session-id` header, else the `session_id` inside `metadata.user_id`, which
 * current versions send as a JSON string (`{"device_id":…,"account_uuid":…,"session_id":…}`) and
 * older ones as `user_<hash>_account_<uuid>_session_<uuid>`.
 */
export function resolveMessagesSession(headers: Readonly<Record<string, string | string[] | undefined>>, metadata: unknown): SessionIdentity | null {
  const named = resolveSession(headers['x-session-id'], undefined);
  if (named !== null) return named;
  const claudeCode = usable(first(headers['x-claude-code-session-id']));
  if (claudeCode !== null) return { id: claudeCode, source: 'claude_code' };
  const userId = metadata !== null && typeof metadata === 'object' ? (metadata as Record<string, unknown>)['user_id'] : undefined;
  const fromUserId = typeof userId === 'string' ? sessionOfUserId(userId) : null;
  return fromUserId === null ? null : { id: fromUserId, source: 'metadata.user_id' };
}

const OLD_USER_ID_SESSION = /_session_([0-9a-f-]{8,})$/i;

function sessionOfUserId(userId: string): string | null {
  if (userId.startsWith('{')) {
    try {
      const parsed = JSON.parse(userId) as unknown;
      return parsed !== null && typeof parsed === 'object' ? usable((parsed as Record<string, unknown>)['session_id']) : null;
    } catch {
      return null;
    }
  }
  return usable(OLD_USER_ID_SESSION.exec(userId)?.[1]);
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A session id as the gateway keeps it: trimmed, cut at 256 characters; null when empty or not a string. */
export function usableSessionId(value: unknown): string | null {
  return usable(value);
}

function usable(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed.slice(0, MAX_SESSION_ID_LENGTH);
}

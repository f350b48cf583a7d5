/**
 * Every error the gateway can answer with, by stable code. Clients and dashboards may key on
 * `code`; never rename one, only add. `type` is the OpenAI error type the SDKs expect for the
 * status. `retryable` says whether the same request may succeed on another upstream credential.
 */
export const ERROR_CODES = {
  invalid_json: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_body: { status: 400, type: 'invalid_request_error', retryable: false },
  /** `previous_response_id` names no response the gateway keeps for the team (never stored, expired, evicted, another team's). */
  previous_response_not_found: { status: 400, type: 'invalid_request_error', retryable: false },
  /** The HTTP message itself could not be parsed (bad chunked framing, Content-Length with Transfer-Encoding…). */
  malformed_request: { status: 400, type: 'invalid_request_error', retryable: false },
  unsupported_media_type: { status: 400, type: 'invalid_request_error', retryable: false },
  model_type_mismatch: { status: 400, type: 'invalid_request_error', retryable: false },
  /** `/v1/native/responses` with a model no OAuth account (provider `codex`) serves. */
  model_not_native: { status: 400, type: 'invalid_request_error', retryable: false },
  /** The model exists and is of the endpoint's type, but no upstream of it serves the endpoint (`/v1/audio/translations` on the local engine). */
  model_not_supported: { status: 400, type: 'invalid_request_error', retryable: false },
  /** The admin API or the CLI was given a model allow-list naming a model the gateway does not serve; the message names close ones. */
  unknown_model: { status: 400, type: 'invalid_request_error', retryable: false },
  upstream_bad_request: { status: 400, type: 'invalid_request_error', retryable: false },

  missing_api_key: { status: 401, type: 'authentication_error', retryable: false },
  invalid_api_key: { status: 401, type: 'authentication_error', retryable: false },
  revoked_api_key: { status: 401, type: 'authentication_error', retryable: false },
  expired_api_key: { status: 401, type: 'authentication_error', retryable: false },
  /** A console session cookie the gateway no longer knows: signed out, idle too long, past its lifetime, or its token revoked. */
  console_session_ended: { status: 401, type: 'authentication_error', retryable: false },

  insufficient_scope: { status: 403, type: 'permission_error', retryable: false },
  model_not_allowed: { status: 403, type: 'permission_error', retryable: false },
  /** A state-changing admin call made with the console's cookie without the session's CSRF token, or from another origin. */
  csrf_check_failed: { status: 403, type: 'permission_error', retryable: false },

  model_not_found: { status: 404, type: 'not_found_error', retryable: false },
  route_not_found: { status: 404, type: 'not_found_error', retryable: false },
  /** The admin API was asked about an upstream credential the config does not have. */
  credential_not_found: { status: 404, type: 'not_found_error', retryable: false },
  /** The admin API was asked about a request the log does not have (by the gateway's id or the caller's `X-Request-Id`). */
  request_not_found: { status: 404, type: 'not_found_error', retryable: false },
  /** The admin API was asked about a session no logged request belongs to. */
  session_not_found: { status: 404, type: 'not_found_error', retryable: false },
  /** The admin API or the CLI named a team (the path's subject) that does not exist. */
  team_not_found: { status: 404, type: 'not_found_error', retryable: false },
  /** The admin API or the CLI named a project (the path's subject) its team does not have. */
  project_not_found: { status: 404, type: 'not_found_error', retryable: false },
  /** The admin API or the CLI named a token id that does not exist. */
  token_not_found: { status: 404, type: 'not_found_error', retryable: false },

  /** An account added at run time would take an id an upstream credential has already. */
  credential_exists: { status: 409, type: 'invalid_request_error', retryable: false },
  /** Removing a credential the config file defines: it is removed there. */
  credential_configured: { status: 409, type: 'invalid_request_error', retryable: false },
  /** Creating a team with the id of one that exists. */
  team_exists: { status: 409, type: 'invalid_request_error', retryable: false },
  /** Creating a project with the id of one its team has. */
  project_exists: { status: 409, type: 'invalid_request_error', retryable: false },
  /** Deleting a team that tokens neither revoked nor expired still belong to; the message names them. */
  team_has_tokens: { status: 409, type: 'invalid_request_error', retryable: false },
  /** Deleting a project that live tokens still belong to; the message names them. */
  project_has_tokens: { status: 409, type: 'invalid_request_error', retryable: false },

  /** The request body stopped arriving for `server.body_timeout_ms`, or its head did not arrive within `server.header_timeout_ms`. */
  request_timeout: { status: 408, type: 'invalid_request_error', retryable: false },

  payload_too_large: { status: 413, type: 'invalid_request_error', retryable: false },

  validation_error: { status: 422, type: 'invalid_request_error', retryable: false },

  /** A `Content-Encoding` the gateway cannot decode: the answer's `Accept-Encoding` lists those it can. */
  unsupported_content_encoding: { status: 415, type: 'invalid_request_error', retryable: false },

  request_headers_too_large: { status: 431, type: 'invalid_request_error', retryable: false },

  /** The caller's own rate limit (rpm, tpm, max_concurrent of its token, project or team); the message names which. */
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error', retryable: false },
  /** The caller's own quota (tokens or dollars per day, per month, in all); the message says when it resets. */
  quota_exceeded: { status: 429, type: 'rate_limit_error', retryable: false },
  upstream_rate_limited: { status: 429, type: 'rate_limit_error', retryable: true },
  /** Every credential of the model is out of quota or balance; `Retry-After` says when the first is tried again. */
  upstream_quota_exhausted: { status: 429, type: 'rate_limit_error', retryable: false },

  internal_error: { status: 500, type: 'server_error', retryable: false },

  upstream_error: { status: 502, type: 'upstream_error', retryable: true },
  upstream_auth_failed: { status: 502, type: 'upstream_error', retryable: true },
  upstream_invalid_response: { status: 502, type: 'upstream_error', retryable: true },
  no_upstream_available: { status: 503, type: 'service_unavailable', retryable: false },
  engine_busy: { status: 503, type: 'service_unavailable', retryable: true },
  shutting_down: { status: 503, type: 'service_unavailable', retryable: false },
  /** The shared state (`state.url`) could not be read for what the request names (a stored response). */
  state_unavailable: { status: 503, type: 'service_unavailable', retryable: false },
  /** The database (`database.url`) could not be reached, answered nothing in time, or stayed locked by another process. */
  database_unavailable: { status: 503, type: 'service_unavailable', retryable: false },
  /** Accounts added at run time are stored sealed; without SWITCHYARD_SECRET_KEY the gateway cannot store one. */
  secret_key_missing: { status: 503, type: 'service_unavailable', retryable: false },
  upstream_timeout: { status: 504, type: 'upstream_error', retryable: true },
} as const satisfies Record<string, { status: number; type: string; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

import type { ErrorBody } from './types';

/** An error answer of the admin API (or a network failure, status 0), with the server's words. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type QueryValues = Record<string, string | number | undefined | null>;

interface CallOptions {
  query?: QueryValues;
  body?: unknown;
  signal?: AbortSignal;
  /** Extra headers (the sign-in's Authorization). */
  headers?: Record<string, string>;
  /** A 401 here is an answer to show, not the end of a session (sign-in, the session check). */
  expectUnauthorized?: boolean;
}

// The CSRF token lives in this module only: memory, never storage, gone on reload (the session
// check hands it out again).
let csrfToken: string | null = null;
let sessionEnded: ((message: string) => void) | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Who to tell when a call answers 401: the session ended elsewhere (revoked, expired, signed out). */
export function onSessionEnded(handler: ((message: string) => void) | null): void {
  sessionEnded = handler;
}

export function withQuery(path: string, query: QueryValues | undefined): string {
  if (query === undefined) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

export async function apiCall<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (csrfToken !== null) headers['x-csrf-token'] = csrfToken;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    if (isAbort(error)) throw error;
    throw new ApiError('The gateway could not be reached. Check your connection and try again.', 0);
  }
  const payload = await readJson(response);
  if (response.ok) return payload as T;
  const error = toApiError(response, payload);
  if (response.status === 401 && options.expectUnauthorized !== true) {
    csrfToken = null;
    sessionEnded?.(error.message);
  }
  throw error;
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function toApiError(response: Response, payload: unknown): ApiError {
  if (isErrorBody(payload)) {
    const { message, code, param } = payload.error;
    return new ApiError(message, response.status, code ?? null, param ?? null);
  }
  const text = typeof payload === 'string' && payload.length < 300 ? `: ${payload}` : '';
  return new ApiError(`The gateway answered ${response.status} ${response.statusText}${text}`.trim(), response.status);
}

function isErrorBody(payload: unknown): payload is ErrorBody {
  if (typeof payload !== 'object' || payload === null || !('error' in payload)) return false;
  const inner = (payload as { error: unknown }).error;
  return typeof inner === 'object' && inner !== null && typeof (inner as { message?: unknown }).message === 'string';
}

/** What to show for a caught error: the server's message, or the exception's. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

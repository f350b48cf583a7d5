// A fake ChatGPT Codex backend (`POST /backend-api/codex/responses`) and a fake
// OAuth token endpoint (`POST /oauth/token`, as on auth.openai.com), for the
// gateway's tests of ChatGPT-subscription accounts.
//
// It replays recorded wire data (test/fixtures/chatgpt, see
// test/fixtures/README.md for where each recording came from): the Responses
// SSE event sequences, the backend's 400/401/429 bodies and quota headers, and
// the token endpoint's refusals. Recorded events are used as templates; only
// ids, text, usage and the fields the request decides are rewritten.
//
// Behaviour in brief:
// - every /responses request and every token request is recorded before it is
//   answered (bodies still compressed in `rawBody`, decoded in `body`);
// - queued `failNext` responses win over everything else;
// - /responses checks, in order: the `chatgpt-account-id` header names a known
//   account and the bearer is that account's current, unexpired, unrevoked
//   access token (else 401); `stream` is true and `store` is false (else 400,
//   the backend's own bodies); the account is not at its usage limit (else the
//   recorded 429); then it streams the answer `reply` plans, one `write()` per
//   event, with `response.completed.response.output` left empty as the Codex
//   backend does (the items arrive in `response.output_item.done`);
// - the token endpoint rotates refresh tokens: each one works once; a second
//   use is refused as `refresh_token_reused`, an unknown or revoked one as
//   `refresh_token_invalidated`. With `revokeFamilyOnReuse` a reuse also
//   revokes the account's newest tokens (no public evidence was found that the
//   real server does this, so it is off by default).
//
// The server, the body reading and the event writing are json-fake-server's,
// on node:http so that nothing between the socket and the test reshapes the bytes.

import { randomBytes, randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync, inflateSync, zstdDecompressSync } from 'node:zlib';
import {
  buildFunctionCallEvents,
  buildTextEvents,
  frameEvent,
  isJsonObject,
  loadFixtures,
  objectField,
  randomAlphanumeric,
  randomHex,
  type Fixtures,
  type JsonObject,
  type StreamContext,
} from './chatgpt-recordings.js';
import { sendBytes as sendWholeBody, startFakeServer, writeEventStream } from './json-fake-server.js';

// The test suite and others read the recordings' SSE framing through this module.
export { parseSseText, type SseEvent } from './chatgpt-recordings.js';

// ---------------------------------------------------------------------------
// Public API

export interface ChatGptAccount {
  accountId: string;
  planType?: string;
}

export interface IssuedTokens {
  idToken: string;
  accessToken: string;
  refreshToken: string;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  rawHeaders: string[];
  /** The body bytes exactly as received, still compressed. */
  rawBody: Buffer;
  /** The decoded JSON body, or undefined when it could not be decoded. */
  body: unknown;
  /** The `chatgpt-account-id` header. */
  accountId: string | undefined;
}

export type ResponsePlan =
  | { kind: 'text'; text: string }
  | { kind: 'function_call'; name: string; arguments: string }
  /** Streams the default text answer and destroys the socket after N events. */
  | { kind: 'cut'; afterEvents: number };

export interface FailNextResponse {
  status: number;
  /** A string is sent as is; anything else as JSON. Without a body, a recorded one for the status. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Only a /responses request for this account takes the failure. */
  accountId?: string;
}

export type TokenOutcome = 'rotated' | 'reused' | 'invalid';

export interface TokenRequestRecord {
  body: unknown;
  refreshToken: string | undefined;
  outcome: TokenOutcome;
}

export interface QuotaUsage {
  primaryUsedPercent?: number;
  secondaryUsedPercent?: number;
}

export interface FakeChatGpt {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** `${url}/backend-api/codex`; gateway requests go to `${baseUrl}/responses`. */
  readonly baseUrl: string;
  /** `${url}/oauth/token` */
  readonly tokenUrl: string;
  /** Every /responses request, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** For each successful /responses answer, the exact SSE bytes written (cut answers: what was written before the cut). */
  readonly sentBodies: Buffer[];
  readonly tokenRequests: TokenRequestRecord[];
  /** Registers an account and issues it valid tokens. */
  addAccount(account: ChatGptAccount, options?: { accessTokenTtlSeconds?: number }): IssuedTokens;
  /** The account's current tokens, as the fake last issued them. */
  currentTokens(accountId: string): IssuedTokens;
  /** A Codex `auth.json` text for the account's current tokens. */
  authJson(accountId: string, options?: { lastRefresh?: string }): string;
  /** From now on the current access token is refused with 401 token_expired (its JWT `exp` stays as issued). */
  expireAccessToken(accountId: string): void;
  /** New current tokens whose access-token JWT `exp` is in the past; the refresh token is valid. */
  issueExpiredTokens(accountId: string): IssuedTokens;
  /** While set (and in the future), /responses for the account answers 429 usage_limit_reached. null clears it. */
  usageLimit(accountId: string, resetsAt: number | null): void;
  /** The used percentages the quota headers report (defaults 0 and 0). */
  setQuota(accountId: string, usage: QuotaUsage): void;
  /** Queued; the first one that applies wins over everything for the next /responses request. */
  failNext(response: FailNextResponse): void;
  /** Decides each successful answer; settable. The default answers DEFAULT_REPLY_TEXT. */
  reply: (request: ReceivedRequest) => ResponsePlan;
  /** Delay before the token endpoint answers (its decision is taken on arrival). */
  tokenDelayMs: number;
  /** Delay between SSE events. */
  eventDelayMs: number;
  /** Successful rotations of the account's refresh token. */
  refreshCount(accountId: string): number;
  close(): Promise<void>;
}

export interface FakeChatGptOptions {
  /** After a refresh token is reused, also revoke the account's newest refresh and access tokens. Default false. */
  revokeFamilyOnReuse?: boolean;
  /** Access-token lifetime when addAccount does not give one. Default 10 days. */
  accessTokenTtlSeconds?: number;
  /** The clock, in milliseconds, for token expiry and usage-limit resets. Default Date.now. */
  now?: () => number;
}

/** Codex CLI's OAuth client id (codex-rs/login, `CLIENT_ID`). */
export const CODEX_CLIENT_ID = 'app_EMoamEEZ73f0CkXaXp7hrann';
export const DEFAULT_REPLY_TEXT = 'Hello from the fake ChatGPT backend.';

const OPENAI_AUTH_CLAIM = 'https://api.openai.com/auth';
const OPENAI_PROFILE_CLAIM = 'https://api.openai.com/profile';
const ISSUER = 'https://auth.openai.com';
const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 10 * 24 * 60 * 60;
const ID_TOKEN_TTL_SECONDS = 60 * 60;
const PRIMARY_WINDOW_MINUTES = 300;
const SECONDARY_WINDOW_MINUTES = 10_080;

// ---------------------------------------------------------------------------
// JWTs

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** An unsigned-looking JWT: base64url(header).base64url(payload).base64url('signature'). */
export function makeJwt(payload: Record<string, unknown>): string {
  return `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))}.${base64url(JSON.stringify(payload))}.${base64url('signature')}`;
}

/** The payload of a JWT made by makeJwt (or any JWT); throws on a malformed token. */
export function decodeJwtPayload(token: string): Record<string, unknown> {
  const payload = token.split('.')[1];
  if (payload === undefined || payload === '') throw new Error('not a JWT');
  const value: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  if (!isJsonObject(value)) throw new Error('JWT payload is not an object');
  return value;
}

// ---------------------------------------------------------------------------
// Account and token state

type RefreshTokenState = 'current' | 'used' | 'revoked';

interface AccountState {
  account: ChatGptAccount;
  email: string;
  userId: string;
  accessTokenTtlSeconds: number;
  current: IssuedTokens;
  /** JWT `exp` of the current access token. */
  accessExp: number;
  /** Why the current access token is refused although its `exp` has not passed. */
  accessRefusal: 'expired' | 'invalidated' | undefined;
  usageLimitResetsAt: number | null;
  primaryUsedPercent: number;
  secondaryUsedPercent: number;
  primaryResetsAt: number;
  secondaryResetsAt: number;
  rotations: number;
}

interface FakeState {
  fixtures: Fixtures;
  options: Required<FakeChatGptOptions>;
  accounts: Map<string, AccountState>;
  refreshTokens: Map<string, { accountId: string; state: RefreshTokenState }>;
  failures: FailNextResponse[];
  handle: FakeChatGpt;
}

function nowSeconds(state: FakeState): number {
  return Math.floor(state.options.now() / 1000);
}

function accountState(state: FakeState, accountId: string): AccountState {
  const account = state.accounts.get(accountId);
  if (account === undefined) throw new Error(`the fake ChatGPT backend has no account "${accountId}"`);
  return account;
}

function authClaims(account: AccountState): JsonObject {
  return {
    chatgpt_account_id: account.account.accountId,
    chatgpt_plan_type: account.account.planType ?? 'plus',
    chatgpt_user_id: account.userId,
    user_id: account.userId,
  };
}

/** Issues new current tokens; the previous refresh token is left as `previousState`. */
function issueTokens(state: FakeState, account: AccountState, accessExp: number, previousState: RefreshTokenState): IssuedTokens {
  const iat = nowSeconds(state);
  const accessToken = makeJwt({
    aud: ['https://api.openai.com/v1'],
    client_id: CODEX_CLIENT_ID,
    exp: accessExp,
    [OPENAI_AUTH_CLAIM]: authClaims(account),
    [OPENAI_PROFILE_CLAIM]: { email: account.email, email_verified: true },
    iat,
    iss: ISSUER,
    jti: randomUUID(),
    scp: ['openid', 'profile', 'email', 'offline_access'],
    sub: `auth0|${account.userId}`,
  });
  const idToken = makeJwt({
    aud: [CODEX_CLIENT_ID],
    email: account.email,
    email_verified: true,
    exp: iat + ID_TOKEN_TTL_SECONDS,
    [OPENAI_AUTH_CLAIM]: authClaims(account),
    iat,
    iss: ISSUER,
    jti: randomUUID(),
    sub: `auth0|${account.userId}`,
  });
  const refreshToken = `rt_${randomBytes(32).toString('base64url')}`;
  const previous = state.refreshTokens.get(account.current.refreshToken);
  if (previous !== undefined && previous.state === 'current') previous.state = previousState;
  state.refreshTokens.set(refreshToken, { accountId: account.account.accountId, state: 'current' });
  account.current = { idToken, accessToken, refreshToken };
  account.accessExp = accessExp;
  account.accessRefusal = undefined;
  return { ...account.current };
}

// ---------------------------------------------------------------------------
// HTTP plumbing

function headerValue(headers: IncomingMessage['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Undoes `content-encoding`; undefined when it cannot. */
function decodeContent(raw: Buffer, encoding: string | undefined): Buffer | undefined {
  const codings = (encoding ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  let bytes = raw;
  try {
    // Codings are listed in the order they were applied.
    for (const coding of codings.reverse()) {
      if (coding === 'zstd') bytes = zstdDecompressSync(bytes);
      else if (coding === 'gzip' || coding === 'x-gzip') bytes = gunzipSync(bytes);
      else if (coding === 'deflate') bytes = inflateSync(bytes);
      else if (coding === 'br') bytes = brotliDecompressSync(bytes);
      else return undefined;
    }
  } catch {
    return undefined;
  }
  return bytes;
}

function parseJson(bytes: Buffer | undefined): unknown {
  if (bytes === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value;
  } catch {
    return undefined;
  }
}

function requestId(): string {
  return randomUUID();
}

function sendBytes(res: ServerResponse, status: number, bytes: Buffer, headers: OutgoingHttpHeaders = {}): void {
  sendWholeBody(res, status, bytes, { 'x-request-id': requestId(), ...headers });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  sendBytes(res, status, Buffer.from(JSON.stringify(body), 'utf8'), headers);
}

// ---------------------------------------------------------------------------
// /backend-api/codex/responses

/** The quota headers, named as recorded, with this account's numbers. */
function quotaHeaders(state: FakeState, account: AccountState, limited: boolean): Record<string, string> {
  const now = nowSeconds(state);
  const primaryResetsAt = limited && account.usageLimitResetsAt !== null ? account.usageLimitResetsAt : account.primaryResetsAt;
  const values: Record<string, string> = {
    'plan-type': account.account.planType ?? 'plus',
    'primary-used-percent': String(limited ? 100 : account.primaryUsedPercent),
    'secondary-used-percent': String(account.secondaryUsedPercent),
    'primary-window-minutes': String(PRIMARY_WINDOW_MINUTES),
    'secondary-window-minutes': String(SECONDARY_WINDOW_MINUTES),
    'primary-reset-after-seconds': String(Math.max(0, primaryResetsAt - now)),
    'secondary-reset-after-seconds': String(Math.max(0, account.secondaryResetsAt - now)),
    'primary-reset-at': String(primaryResetsAt),
    'secondary-reset-at': String(account.secondaryResetsAt),
  };
  const headers: Record<string, string> = {};
  for (const [name, recorded] of Object.entries(state.fixtures.quotaHeaders)) {
    const key = name.toLowerCase().replace(/^x-codex-/, '');
    headers[name] = values[key] ?? recorded;
  }
  return headers;
}

function takeFailure(state: FakeState, accountId: string | undefined): FailNextResponse | undefined {
  const index = state.failures.findIndex((failure) => failure.accountId === undefined || failure.accountId === accountId);
  if (index === -1) return undefined;
  return state.failures.splice(index, 1)[0];
}

function sendFailure(res: ServerResponse, state: FakeState, failure: FailNextResponse): void {
  const headers = failure.headers ?? {};
  if (typeof failure.body === 'string') {
    sendBytes(res, failure.status, Buffer.from(failure.body, 'utf8'), { 'content-type': 'text/plain; charset=utf-8', ...headers });
  } else if (failure.body !== undefined) {
    sendJson(res, failure.status, failure.body, headers);
  } else if (failure.status === 401) {
    sendBytes(res, 401, state.fixtures.tokenExpired, headers);
  } else if (failure.status === 429) {
    sendJson(res, 429, state.fixtures.usageLimitBody, headers);
  } else {
    // Composed in the backend's FastAPI-style `{"detail": …}` shape.
    sendJson(res, failure.status, { detail: STATUS_CODES[failure.status] ?? `HTTP ${failure.status}` }, headers);
  }
}

/** The 401 body for a request that does not carry the account's current, valid access token; undefined when it does. */
function authorizationFailure(state: FakeState, recorded: ReceivedRequest, account: AccountState | undefined): Buffer | undefined {
  const authorization = headerValue(recorded.headers, 'authorization') ?? '';
  const bearer = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
  if (account === undefined || bearer === undefined || bearer !== account.current.accessToken) {
    return state.fixtures.tokenInvalidated;
  }
  if (account.accessRefusal === 'invalidated') return state.fixtures.tokenInvalidated;
  if (account.accessRefusal === 'expired' || account.accessExp <= nowSeconds(state)) return state.fixtures.tokenExpired;
  return undefined;
}

function activeUsageLimit(state: FakeState, account: AccountState): number | undefined {
  const resetsAt = account.usageLimitResetsAt;
  if (resetsAt === null) return undefined;
  if (resetsAt <= nowSeconds(state)) {
    account.usageLimitResetsAt = null;
    return undefined;
  }
  return resetsAt;
}

function usageLimitBody(state: FakeState, account: AccountState, resetsAt: number): JsonObject {
  const body = structuredClone(state.fixtures.usageLimitBody);
  const error = objectField(body, 'error');
  error.plan_type = account.account.planType ?? 'plus';
  error.resets_at = resetsAt;
  error.resets_in_seconds = Math.max(0, resetsAt - nowSeconds(state));
  return body;
}

function turnState(recorded: ReceivedRequest): string {
  // Codex echoes the value it got back on later requests of the same turn.
  return headerValue(recorded.headers, 'x-codex-turn-state') ?? randomBytes(48).toString('base64url');
}

async function streamAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  state: FakeState,
  account: AccountState,
  recorded: ReceivedRequest,
  request: JsonObject,
): Promise<void> {
  const plan = state.handle.reply(recorded);
  const now = nowSeconds(state);
  const context: StreamContext = { request, responseId: `resp_${randomHex(24)}`, createdAt: now, nowSeconds: now };
  const events =
    plan.kind === 'function_call'
      ? buildFunctionCallEvents(state.fixtures.functionCallStream, context, plan.name, plan.arguments)
      : buildTextEvents(state.fixtures.textStream, context, plan.kind === 'text' ? plan.text : DEFAULT_REPLY_TEXT);
  const cutAfter = plan.kind === 'cut' ? plan.afterEvents : undefined;

  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-request-id': requestId(),
    'x-codex-turn-state': turnState(recorded),
    ...quotaHeaders(state, account, false),
  });
  res.flushHeaders();
  const written: Buffer[] = [];
  try {
    // One write per event, then a turn of the event loop, so each event leaves as its own chunk
    // and a relay's event-by-event pace shows; a cut ends the body mid-stream, without the
    // terminating chunk (a cut past the last event sends them all and ends the stream).
    await writeEventStream(req, res, events.map(frameEvent), {
      delayMs: state.handle.eventDelayMs,
      ...(cutAfter !== undefined && cutAfter < events.length ? { resetAfterEvents: cutAfter } : {}),
      onEvent: (bytes) => written.push(bytes),
    });
  } finally {
    state.handle.sentBodies.push(Buffer.concat(written));
  }
}

async function handleResponses(req: IncomingMessage, res: ServerResponse, state: FakeState, rawBody: Buffer): Promise<void> {
  const headers = { ...req.headers };
  const recorded: ReceivedRequest = {
    method: req.method ?? 'POST',
    path: (req.url ?? '/').split('?')[0] ?? '/',
    headers,
    rawHeaders: [...req.rawHeaders],
    rawBody,
    body: parseJson(decodeContent(rawBody, headerValue(headers, 'content-encoding'))),
    accountId: headerValue(headers, 'chatgpt-account-id'),
  };
  state.handle.requests.push(recorded);

  const failure = takeFailure(state, recorded.accountId);
  if (failure !== undefined) {
    sendFailure(res, state, failure);
    return;
  }
  const account = recorded.accountId === undefined ? undefined : state.accounts.get(recorded.accountId);
  const unauthorized = authorizationFailure(state, recorded, account);
  if (unauthorized !== undefined || account === undefined) {
    sendBytes(res, 401, unauthorized ?? state.fixtures.tokenInvalidated);
    return;
  }
  const body = recorded.body;
  if (!isJsonObject(body)) {
    // Composed: no recording of the backend's answer to an undecodable body.
    sendJson(res, 400, { detail: 'Could not decode the request body as JSON' });
    return;
  }
  if (body.stream !== true) {
    sendBytes(res, 400, state.fixtures.streamMustBeTrue);
    return;
  }
  if (body.store !== false) {
    sendBytes(res, 400, state.fixtures.storeMustBeFalse);
    return;
  }
  const resetsAt = activeUsageLimit(state, account);
  if (resetsAt !== undefined) {
    sendJson(res, 429, usageLimitBody(state, account, resetsAt), quotaHeaders(state, account, true));
    return;
  }
  await streamAnswer(req, res, state, account, recorded, body);
}

// ---------------------------------------------------------------------------
// /oauth/token

function parseTokenBody(raw: Buffer, contentType: string | undefined): unknown {
  if ((contentType ?? '').toLowerCase().includes('application/x-www-form-urlencoded')) {
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  }
  return parseJson(raw);
}

interface TokenDecision {
  outcome: TokenOutcome;
  status: number;
  body: Buffer;
}

function decideToken(state: FakeState, body: unknown, refreshToken: string | undefined): TokenDecision {
  if (!isJsonObject(body) || body.grant_type !== 'refresh_token' || body.client_id !== CODEX_CLIENT_ID || !refreshToken) {
    // Composed in the OpenAI error envelope; no recording of these refusals.
    const message = !isJsonObject(body)
      ? 'Could not parse the request body.'
      : body.client_id !== CODEX_CLIENT_ID
        ? 'Unknown client_id.'
        : body.grant_type !== 'refresh_token'
          ? 'Unsupported grant_type.'
          : "Invalid 'refresh_token': empty string. Expected a string with minimum length 1, but got an empty string instead.";
    const error = { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request' } };
    return { outcome: 'invalid', status: 400, body: Buffer.from(JSON.stringify(error, null, 2), 'utf8') };
  }
  const entry = state.refreshTokens.get(refreshToken);
  if (entry === undefined || entry.state === 'revoked') {
    return { outcome: 'invalid', status: 401, body: state.fixtures.refreshTokenInvalidated };
  }
  const account = accountState(state, entry.accountId);
  if (entry.state === 'used') {
    if (state.options.revokeFamilyOnReuse) {
      for (const other of state.refreshTokens.values()) {
        if (other.accountId === entry.accountId && other.state === 'current') other.state = 'revoked';
      }
      account.accessRefusal = 'invalidated';
    }
    return { outcome: 'reused', status: 401, body: state.fixtures.refreshTokenReused };
  }
  const tokens = issueTokens(state, account, nowSeconds(state) + account.accessTokenTtlSeconds, 'used');
  account.rotations += 1;
  const answer = { id_token: tokens.idToken, access_token: tokens.accessToken, refresh_token: tokens.refreshToken };
  return { outcome: 'rotated', status: 200, body: Buffer.from(JSON.stringify(answer), 'utf8') };
}

async function handleToken(res: ServerResponse, state: FakeState, raw: Buffer, contentType: string | undefined): Promise<void> {
  const body = parseTokenBody(raw, contentType);
  const refreshToken = isJsonObject(body) && typeof body.refresh_token === 'string' ? body.refresh_token : undefined;
  // Decided on arrival, so concurrent refreshes with one token race the way
  // they do against the real server: the first rotates, the rest are reuses.
  const decision = decideToken(state, body, refreshToken);
  state.handle.tokenRequests.push({ body, refreshToken, outcome: decision.outcome });
  if (state.handle.tokenDelayMs > 0) await sleep(state.handle.tokenDelayMs);
  sendBytes(res, decision.status, decision.body);
}

// ---------------------------------------------------------------------------
// Server

const RESPONSES_PATH = '/backend-api/codex/responses';
const TOKEN_PATH = '/oauth/token';

async function handleRequest(req: IncomingMessage, res: ServerResponse, rawBody: Buffer, state: FakeState): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (path === RESPONSES_PATH && req.method === 'POST') {
    await handleResponses(req, res, state, rawBody);
  } else if (path === TOKEN_PATH && req.method === 'POST') {
    await handleToken(res, state, rawBody, headerValue(req.headers, 'content-type'));
  } else if (path === RESPONSES_PATH || path === TOKEN_PATH) {
    sendJson(res, 405, { detail: 'Method Not Allowed' });
  } else {
    sendJson(res, 404, { detail: 'Not Found' });
  }
}

export async function startFakeChatGpt(options: FakeChatGptOptions = {}): Promise<FakeChatGpt> {
  const fixtures = await loadFixtures();
  const resolved: Required<FakeChatGptOptions> = {
    revokeFamilyOnReuse: options.revokeFamilyOnReuse ?? false,
    accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? DEFAULT_ACCESS_TOKEN_TTL_SECONDS,
    now: options.now ?? Date.now,
  };
  const accounts = new Map<string, AccountState>();
  const failures: FailNextResponse[] = [];
  // Requests arrive only once the handle below exists: nothing asks a server whose address is not yet returned.
  const server = await startFakeServer((req, res, rawBody) => handleRequest(req, res, rawBody, state));
  const { url } = server;

  const handle: FakeChatGpt = {
    url,
    baseUrl: `${url}/backend-api/codex`,
    tokenUrl: `${url}${TOKEN_PATH}`,
    requests: [],
    sentBodies: [],
    tokenRequests: [],
    reply: () => ({ kind: 'text', text: DEFAULT_REPLY_TEXT }),
    tokenDelayMs: 0,
    eventDelayMs: 0,
    addAccount(account, accountOptions = {}) {
      if (accounts.has(account.accountId)) throw new Error(`account "${account.accountId}" already exists`);
      const now = nowSeconds(state);
      const created: AccountState = {
        account: { ...account },
        email: `${account.accountId}@example.com`,
        userId: `user-${randomAlphanumeric(24)}`,
        accessTokenTtlSeconds: accountOptions.accessTokenTtlSeconds ?? resolved.accessTokenTtlSeconds,
        current: { idToken: '', accessToken: '', refreshToken: '' },
        accessExp: 0,
        accessRefusal: undefined,
        usageLimitResetsAt: null,
        primaryUsedPercent: 0,
        secondaryUsedPercent: 0,
        primaryResetsAt: now + PRIMARY_WINDOW_MINUTES * 60,
        secondaryResetsAt: now + SECONDARY_WINDOW_MINUTES * 60,
        rotations: 0,
      };
      accounts.set(account.accountId, created);
      return issueTokens(state, created, now + created.accessTokenTtlSeconds, 'revoked');
    },
    currentTokens(accountId) {
      return { ...accountState(state, accountId).current };
    },
    authJson(accountId, authOptions = {}) {
      const account = accountState(state, accountId);
      const authDotJson = {
        auth_mode: 'chatgpt',
        OPENAI_API_KEY: null,
        tokens: {
          id_token: account.current.idToken,
          access_token: account.current.accessToken,
          refresh_token: account.current.refreshToken,
          account_id: account.account.accountId,
        },
        last_refresh: authOptions.lastRefresh ?? new Date(resolved.now()).toISOString(),
      };
      // Codex writes auth.json with serde_json::to_string_pretty (2 spaces).
      return JSON.stringify(authDotJson, null, 2);
    },
    expireAccessToken(accountId) {
      accountState(state, accountId).accessRefusal = 'expired';
    },
    issueExpiredTokens(accountId) {
      const account = accountState(state, accountId);
      return issueTokens(state, account, nowSeconds(state) - 60, 'revoked');
    },
    usageLimit(accountId, resetsAt) {
      accountState(state, accountId).usageLimitResetsAt = resetsAt;
    },
    setQuota(accountId, usage) {
      const account = accountState(state, accountId);
      if (usage.primaryUsedPercent !== undefined) account.primaryUsedPercent = usage.primaryUsedPercent;
      if (usage.secondaryUsedPercent !== undefined) account.secondaryUsedPercent = usage.secondaryUsedPercent;
    },
    failNext(response) {
      failures.push(response);
    },
    refreshCount(accountId) {
      return accountState(state, accountId).rotations;
    },
    close: () => server.close(),
  };
  const state: FakeState = { fixtures, options: resolved, accounts, refreshTokens: new Map(), failures, handle };
  return handle;
}

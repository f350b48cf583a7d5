import type { EndpointConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
import type {
  Attempt,
  Capabilities,
  ChatCall,
  ChatCompletionResult,
  ChatProvider,
  ChatStreamEvent,
  NativeCall,
  NativeProvider,
  NativeResponse,
  ProviderAdapter,
  StatelessResponsesCall,
  StatelessResponsesProvider,
} from '../provider-adapter.js';
import type { ResponseStreamEvent } from '../../protocols/openai-responses/responses-types.js';
import { classifyAnswer, type ErrorDialect } from '../shared/classify-upstream-failure.js';
import { readUpstreamKeys } from '../shared/upstream-keys.js';
import { UpstreamClient, type StreamingResponse } from '../shared/upstream-client.js';
import { CodexAccount, type CodexGrant, type CodexRefresher } from './codex-account.js';
import { refreshCodexTokens, RefreshRejectedError } from './codex-token-refresh.js';
import { CODEX_UPSTREAM_KEYS, DEFAULT_CODEX_BASE_URL, DEFAULT_CODEX_REFRESH_TIMEOUT_MS, DEFAULT_CODEX_TOKEN_URL } from './codex-upstream-keys.js';
import { codexErrorDialect } from './map-codex-error.js';
import { collectChatCompletion } from '../../protocols/openai-responses/collect-chat-completion.js';
import { toResponsesRequest } from '../../protocols/openai-responses/convert-to-responses-request.js';
import { readResponseEvents, readResponsesAsChatStream } from './codex-chat-stream.js';
import { ResponsesStreamTap } from '../shared/responses-stream-tap.js';

/**
 * ChatGPT subscription accounts (`codex`): the Codex backend at `{base_url}/responses`, reached
 * with an account's OAuth access token and `chatgpt-account-id`. It serves the native passthrough
 * (the client's bytes, untouched), the Responses API as such (`/v1/responses`, the gateway keeping
 * the conversation, since the backend keeps nothing) and chat completions (converted to and from
 * its Responses API).
 * Each credential carries its CodexAccount; the adapter renews a token the backend refused, once.
 */
export class CodexAdapter implements ProviderAdapter, NativeProvider, ChatProvider, StatelessResponsesProvider {
  readonly endpoint: string;
  readonly capabilities: Capabilities;
  readonly native: NativeProvider = this;
  readonly statelessResponses: StatelessResponsesProvider = this;
  private readonly client: UpstreamClient;
  private readonly tokenClient: UpstreamClient;
  private readonly refreshTimeoutMs: number;
  private readonly dialect: ErrorDialect = codexErrorDialect();

  constructor(endpoint: EndpointConfig) {
    this.endpoint = endpoint.name;
    this.capabilities = { chat: this };
    const keys = readUpstreamKeys(endpoint, CODEX_UPSTREAM_KEYS);
    this.client = new UpstreamClient(endpoint.base_url ?? DEFAULT_CODEX_BASE_URL, endpoint);
    this.tokenClient = new UpstreamClient(keys.token_url ?? DEFAULT_CODEX_TOKEN_URL, endpoint);
    this.refreshTimeoutMs = keys.refresh_timeout_ms ?? DEFAULT_CODEX_REFRESH_TIMEOUT_MS;
  }

  async openNative(attempt: Attempt, call: NativeCall): Promise<NativeResponse> {
    const response = await this.open(attempt, call.body, call.headers, call.cancellation);
    const tap = new ResponsesStreamTap(this.client.maxEventBytes);
    return { statusCode: response.statusCode, headers: response.headers, body: tap.tap(response.body), usage: () => tap.usage };
  }

  async chatCompletion(attempt: Attempt, call: ChatCall): Promise<ChatCompletionResult> {
    // The backend only streams: a completion is its stream, collected.
    return collectChatCompletion(await this.streamChatCompletion(attempt, call));
  }

  async streamChatCompletion(attempt: Attempt, call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    const body = Buffer.from(JSON.stringify(toResponsesRequest(call.body, { upstreamModel: call.body.model })));
    const response = await this.open(attempt, body, CHAT_HEADERS, call.cancellation);
    return readResponsesAsChatStream(response.body, { upstreamId: attempt.credential.id, model: call.body.model, maxEventBytes: this.client.maxEventBytes });
  }

  async streamResponse(attempt: Attempt, call: StatelessResponsesCall): Promise<AsyncIterable<ResponseStreamEvent>> {
    const response = await this.open(attempt, Buffer.from(JSON.stringify(call.body)), CHAT_HEADERS, call.cancellation);
    return readResponseEvents(response.body, { upstreamId: attempt.credential.id, maxEventBytes: this.client.maxEventBytes });
  }

  close(): Promise<void> {
    return Promise.all([this.client.close(), this.tokenClient.close()]).then(() => undefined);
  }

  /** The call on the attempt's account; a 401 renews its token once and tries again on the same account. */
  private async open(
    attempt: Attempt,
    body: Buffer,
    headers: Readonly<Record<string, string>>,
    cancellation: AbortSignal,
  ): Promise<Extract<StreamingResponse, { ok: true }>> {
    const account = accountOf(attempt);
    const refresher = this.refresher(attempt);
    let grant = await this.withRefreshFailures(attempt, () => account.grant(refresher));
    for (let renewed = false; ; renewed = true) {
      const response = await this.client.openEventStream({
        path: '/responses',
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${grant.accessToken}`, 'chatgpt-account-id': grant.accountId },
        body,
        cancellation,
        attempt,
      });
      account.noteQuota(response.headers);
      if (response.ok) return response;
      if (response.statusCode === 401 && !renewed) {
        const refused = grant.accessToken;
        grant = await this.withRefreshFailures(attempt, () => account.renew(refused, refresher));
        continue;
      }
      throw classifyAnswer(response.statusCode, response.headers, response.body.toString('utf8'), attempt.credential.id, this.dialect);
    }
  }

  /** Not cancelled with the request that started it; bounded by its own timeout (see refreshCodexTokens). */
  private refresher(attempt: Attempt): CodexRefresher {
    return (tokens) => refreshCodexTokens(this.tokenClient, attempt.credential, tokens, Date.now(), this.refreshTimeoutMs);
  }

  /** A dead refresh token takes the account out of service (`failed`, with the reason); anything else fails over. */
  private async withRefreshFailures(attempt: Attempt, renew: () => Promise<CodexGrant>): Promise<CodexGrant> {
    try {
      return await renew();
    } catch (error) {
      const id = attempt.credential.id;
      if (error instanceof RefreshRejectedError) {
        throw new GatewayError('upstream_auth_failed', `Upstream ${id}: ${error.message}; log the account in again.`, {
          upstream: { class: 'auth', status: error.status, retryAfterSeconds: null, rateLimitHeaders: {}, credentialId: id, message: error.message },
        });
      }
      if (error instanceof GatewayError) throw error;
      throw new GatewayError('upstream_error', `Upstream ${id}: refreshing its token failed (${(error as Error).message}).`, {
        cause: error,
        upstream: { class: 'server', status: null, retryAfterSeconds: null, rateLimitHeaders: {}, credentialId: id, message: (error as Error).message },
      });
    }
  }
}

/** What chat and Responses calls send besides the account's own headers: the backend streams Server-Sent Events of JSON. */
const CHAT_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/json', accept: 'text/event-stream' });

function accountOf(attempt: Attempt): CodexAccount {
  const account = attempt.credential.account;
  if (!(account instanceof CodexAccount)) throw new Error(`credential ${attempt.credential.id} has no ChatGPT account`);
  return account;
}

export function createCodexAdapter(endpoint: EndpointConfig): CodexAdapter {
  return new CodexAdapter(endpoint);
}

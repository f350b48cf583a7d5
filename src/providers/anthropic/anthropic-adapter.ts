import type { EndpointConfig } from '../../config/index.js';
import { isObject } from '../../core/index.js';
import type {
  Attempt,
  Capabilities,
  Credential,
  ChatCall,
  ChatCompletionResult,
  ChatProvider,
  ChatStreamEvent,
  MessagesCall,
  MessagesProvider,
  MessagesResult,
  ProviderAdapter,
  ProviderFactory,
} from '../provider-adapter.js';
import { CredentialHeaders } from '../shared/credential-headers.js';
import type { JsonGuard } from '../shared/json-guard.js';
import { MessagesStreamTap } from '../shared/messages-stream-tap.js';
import { UpstreamClient, type UpstreamRequest } from '../shared/upstream-client.js';
import { AnthropicChatEvents } from './anthropic-chat-stream.js';
import { convertToAnthropicRequest } from '../../protocols/anthropic-messages/convert-chat-to-messages-request.js';
import { completionText, convertToOpenAICompletion } from '../../protocols/anthropic-messages/convert-message-to-chat.js';
import { ANTHROPIC_VERSION, type AnthropicMessageResponse } from '../../protocols/anthropic-messages/messages-types.js';
import { anthropicUsage } from '../../protocols/anthropic-messages/messages-usage.js';
import { anthropicErrorDialect } from './map-anthropic-error.js';

const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/**
 * Anthropic's Messages API, behind the OpenAI chat completions contract and passed through for
 * `/v1/messages`. `base_url` is the origin (default https://api.anthropic.com); requests go to
 * `{base_url}/v1/messages`.
 */
export class AnthropicAdapter implements ProviderAdapter, ChatProvider, MessagesProvider {
  readonly endpoint: string;
  readonly capabilities: Capabilities = { chat: this };
  readonly messages: MessagesProvider = this;
  private readonly client: UpstreamClient;
  private readonly headers = new CredentialHeaders(anthropicHeaders);

  constructor(endpoint: EndpointConfig) {
    this.endpoint = endpoint.name;
    this.client = new UpstreamClient(endpoint.base_url ?? DEFAULT_ANTHROPIC_BASE_URL, endpoint);
  }

  async chatCompletion(attempt: Attempt, call: ChatCall): Promise<ChatCompletionResult> {
    const request = convertToAnthropicRequest(call.body, { stream: false });
    const { value: message } = await this.client.postJson(this.post(attempt, JSON.stringify(request), call.cancellation), anthropicErrorDialect, MESSAGE);
    const completion = convertToOpenAICompletion(message, Math.floor(Date.now() / 1000));
    return {
      payload: Buffer.from(JSON.stringify(completion)),
      usage: anthropicUsage(message.usage),
      completionText: () => completionText(completion),
    };
  }

  streamChatCompletion(attempt: Attempt, call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    const request = convertToAnthropicRequest(call.body, { stream: true });
    return this.client.openEvents(
      this.post(attempt, JSON.stringify(request), call.cancellation),
      anthropicErrorDialect,
      new AnthropicChatEvents(attempt.credential.id),
    );
  }

  /** The caller's body as it came (its model already the route's), the upstream's JSON or event stream back as bytes. */
  async createMessage(attempt: Attempt, call: MessagesCall): Promise<MessagesResult> {
    const request = this.passOn(attempt, '/v1/messages', call);
    if (!call.stream) {
      const { body: payload, value: message } = await this.client.postJson(request, anthropicErrorDialect, MESSAGE);
      return { kind: 'json', payload, usage: anthropicUsage(message.usage) };
    }
    const response = await this.client.openBody(request, anthropicErrorDialect, true);
    const tap = new MessagesStreamTap(this.client.maxEventBytes);
    return { kind: 'stream', body: tap.tap(response.body), usage: () => tap.usage };
  }

  async countTokens(attempt: Attempt, call: Omit<MessagesCall, 'stream'>): Promise<Buffer> {
    const { body } = await this.client.postJson(this.passOn(attempt, '/v1/messages/count_tokens', call), anthropicErrorDialect, TOKEN_COUNT);
    return body;
  }

  close(): Promise<void> {
    return this.client.close();
  }

  /** The caller's `anthropic-version` and `anthropic-beta` over the credential's own headers. */
  private passOn(attempt: Attempt, path: string, call: Omit<MessagesCall, 'stream'>): UpstreamRequest {
    const headers = this.headers.of(attempt.credential);
    const body = Buffer.from(call.body.buffer, call.body.byteOffset, call.body.byteLength);
    return { path, method: 'POST', headers: { ...headers, ...call.headers }, body, cancellation: call.cancellation, attempt };
  }

  private post(attempt: Attempt, body: string, cancellation: AbortSignal): UpstreamRequest {
    return { path: '/v1/messages', method: 'POST', headers: this.headers.of(attempt.credential), body, cancellation, attempt };
  }
}

function anthropicHeaders(credential: Credential): Record<string, string> {
  return {
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
    ...(credential.apiKey ? { 'x-api-key': credential.apiKey } : {}),
    ...credential.headers,
  };
}

/** A Messages API answer: an object whose `content` is a list of blocks. Anything else is the upstream failing. */
const MESSAGE: JsonGuard<AnthropicMessageResponse> = {
  expected: 'a message',
  test: (value): value is AnthropicMessageResponse => isObject(value) && Array.isArray(value['content']) && value['content'].every(isObject),
};

/** A count_tokens answer: an object with `input_tokens`. */
const TOKEN_COUNT: JsonGuard<Record<string, unknown>> = {
  expected: 'a token count',
  test: (value): value is Record<string, unknown> => isObject(value) && typeof value['input_tokens'] === 'number',
};

export const createAnthropicAdapter: ProviderFactory = (endpoint) => new AnthropicAdapter(endpoint);

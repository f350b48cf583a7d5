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
  ProviderAdapter,
  ProviderFactory,
} from '../provider-adapter.js';
import { CredentialHeaders } from '../shared/credential-headers.js';
import type { JsonGuard } from '../shared/json-guard.js';
import { UpstreamClient, type UpstreamRequest } from '../shared/upstream-client.js';
import { AnthropicChatEvents } from './anthropic-chat-stream.js';
import { ANTHROPIC_VERSION, DEFAULT_ANTHROPIC_BASE_URL, type AnthropicMessageResponse } from './anthropic-api.js';
import { convertToAnthropicRequest } from './convert-to-anthropic-request.js';
import { completionText, convertToOpenAICompletion } from './convert-to-openai-completion.js';
import { anthropicErrorDialect } from './map-anthropic-error.js';
import { toUsage } from './map-anthropic-usage.js';

/**
 * Anthropic's Messages API behind the OpenAI chat completions contract. `base_url` is the origin
 * (default https://api.anthropic.com); requests go to `{base_url}/v1/messages`.
 */
export class AnthropicAdapter implements ProviderAdapter, ChatProvider {
  readonly endpoint: string;
  readonly capabilities: Capabilities = { chat: this };
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
      usage: completion.usage === undefined ? null : toUsage(completion.usage),
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

  close(): Promise<void> {
    return this.client.close();
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

export const createAnthropicAdapter: ProviderFactory = (endpoint) => new AnthropicAdapter(endpoint);

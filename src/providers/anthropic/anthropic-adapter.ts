import type { EndpointConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
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
import { UpstreamClient, type BufferedResponse, type UpstreamRequest } from '../shared/upstream-client.js';
import { readAnthropicChatStream } from './anthropic-chat-stream.js';
import { ANTHROPIC_VERSION, DEFAULT_ANTHROPIC_BASE_URL, type AnthropicMessageResponse } from './anthropic-api.js';
import { convertToAnthropicRequest } from './convert-to-anthropic-request.js';
import { completionText, convertToOpenAICompletion } from './convert-to-openai-completion.js';
import { mapAnthropicError } from './map-anthropic-error.js';
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
    const response = await this.client.requestBuffered(this.post(attempt, JSON.stringify(request), call.cancellation));
    if (response.statusCode < 200 || response.statusCode >= 300) throw this.error(response, attempt);
    const completion = convertToOpenAICompletion(parseMessage(response.body, attempt.credential.id), Math.floor(Date.now() / 1000));
    return {
      payload: Buffer.from(JSON.stringify(completion)),
      usage: completion.usage === undefined ? null : toUsage(completion.usage),
      completionText: () => completionText(completion),
    };
  }

  async streamChatCompletion(attempt: Attempt, call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    const request = convertToAnthropicRequest(call.body, { stream: true });
    const response = await this.client.openEventStream(this.post(attempt, JSON.stringify(request), call.cancellation));
    if (!response.ok) throw this.error(response, attempt);
    return readAnthropicChatStream(response.body, attempt.credential.id, undefined, this.client.maxEventBytes);
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private post(attempt: Attempt, body: string, cancellation: AbortSignal): UpstreamRequest {
    return { path: '/v1/messages', method: 'POST', headers: this.headers.of(attempt.credential), body, cancellation, attempt };
  }

  private error(response: BufferedResponse, attempt: Attempt): GatewayError {
    return mapAnthropicError(response.statusCode, response.body.toString('utf8'), response.headers, attempt.credential.id);
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
function parseMessage(body: Buffer, credentialId: string): AnthropicMessageResponse {
  let message: unknown;
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    // Reported below.
  }
  if (isObject(message) && Array.isArray(message['content']) && message['content'].every(isObject)) return message as AnthropicMessageResponse;
  throw new GatewayError('upstream_invalid_response', `Upstream ${credentialId} answered with a body that is not a message.`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const createAnthropicAdapter: ProviderFactory = (endpoint) => new AnthropicAdapter(endpoint);

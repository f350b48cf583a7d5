import type { UpstreamConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
import type {
  Capabilities,
  ChatCall,
  ChatCompletionResult,
  ChatProvider,
  ChatStreamEvent,
  ProviderAdapter,
  ProviderFactory,
} from '../provider-adapter.js';
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
  readonly upstreamId: string;
  readonly capabilities: Capabilities = { chat: this };
  private readonly client: UpstreamClient;
  private readonly headers: Record<string, string>;

  constructor(upstream: UpstreamConfig) {
    this.upstreamId = upstream.id;
    this.client = new UpstreamClient(upstream.base_url ?? DEFAULT_ANTHROPIC_BASE_URL, upstream);
    this.headers = {
      'content-type': 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      ...(upstream.api_key ? { 'x-api-key': upstream.api_key } : {}),
      ...upstream.headers,
    };
  }

  async chatCompletion(call: ChatCall): Promise<ChatCompletionResult> {
    const request = convertToAnthropicRequest(call.body, { stream: false });
    const response = await this.client.requestBuffered(this.post(JSON.stringify(request), call.cancellation));
    if (response.statusCode < 200 || response.statusCode >= 300) throw this.error(response);
    const completion = convertToOpenAICompletion(this.parseMessage(response.body), Math.floor(Date.now() / 1000));
    return {
      payload: Buffer.from(JSON.stringify(completion)),
      usage: completion.usage === undefined ? null : toUsage(completion.usage),
      completionText: () => completionText(completion),
    };
  }

  async streamChatCompletion(call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    const request = convertToAnthropicRequest(call.body, { stream: true });
    const response = await this.client.openEventStream(this.post(JSON.stringify(request), call.cancellation));
    if (!response.ok) throw this.error(response);
    return readAnthropicChatStream(response.body, this.upstreamId, undefined, this.client.maxEventBytes);
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private post(body: string, cancellation: AbortSignal): UpstreamRequest {
    return { path: '/v1/messages', method: 'POST', headers: this.headers, body, cancellation };
  }

  /** A Messages API answer: an object whose `content` is a list of blocks. Anything else is the upstream failing. */
  private parseMessage(body: Buffer): AnthropicMessageResponse {
    let message: unknown;
    try {
      message = JSON.parse(body.toString('utf8'));
    } catch {
      // Reported below.
    }
    if (isObject(message) && Array.isArray(message['content']) && message['content'].every(isObject)) return message as AnthropicMessageResponse;
    throw new GatewayError('upstream_invalid_response', `Upstream ${this.upstreamId} answered with a body that is not a message.`);
  }

  private error(response: BufferedResponse): GatewayError {
    return mapAnthropicError(response.statusCode, response.body.toString('utf8'), response.headers, this.upstreamId);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const createAnthropicAdapter: ProviderFactory = (upstream) => new AnthropicAdapter(upstream);

import type { UpstreamConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
import type { ChatCall, ChatCompletionResult, ChatStreamEvent, ProviderAdapter, ProviderFactory } from '../provider-adapter.js';
import { readErrorBody, UpstreamClient, type UpstreamResponse } from '../shared/upstream-client.js';
import { DEFAULT_OPENAI_BASE_URL, type OpenAIChatCompletion } from './openai-api.js';
import { mapOpenAIError } from './map-openai-error.js';
import { generatedText, mapOpenAIUsage } from './map-openai-usage.js';
import { readOpenAIChatStream } from './openai-chat-stream.js';

/**
 * Any OpenAI-compatible upstream: OpenAI itself, vLLM, Ollama, llama.cpp server, Groq, Together,
 * OpenRouter… Vendors differ only in `base_url`, `api_key` and extra `headers`.
 */
export class OpenAIAdapter implements ProviderAdapter {
  readonly upstreamId: string;
  readonly capabilities = new Set(['chat'] as const);
  private readonly client: UpstreamClient;
  private readonly headers: Record<string, string>;

  constructor(upstream: UpstreamConfig) {
    this.upstreamId = upstream.id;
    this.client = new UpstreamClient(upstream.base_url ?? DEFAULT_OPENAI_BASE_URL, upstream);
    this.headers = {
      'content-type': 'application/json',
      ...(upstream.api_key ? { authorization: `Bearer ${upstream.api_key}` } : {}),
      ...upstream.headers,
    };
  }

  async chatCompletion(call: ChatCall): Promise<ChatCompletionResult> {
    const response = await this.post('/chat/completions', JSON.stringify(call.body), call.signal);
    const payload = new Uint8Array(await response.body.arrayBuffer());
    let completion: OpenAIChatCompletion;
    try {
      completion = JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8')) as OpenAIChatCompletion;
    } catch {
      throw new GatewayError('upstream_invalid_response', `Upstream ${this.upstreamId} answered with a body that is not JSON.`);
    }
    return {
      payload,
      usage: mapOpenAIUsage(completion.usage),
      completionText: () => (completion.choices ?? []).map((choice) => generatedText(choice.message)).join(''),
    };
  }

  async streamChatCompletion(call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    // Usage is always requested so it can be recorded; the gateway drops the usage chunk for clients that did not ask.
    const streamOptions = typeof call.body['stream_options'] === 'object' && call.body['stream_options'] !== null ? call.body['stream_options'] : {};
    const body = { ...call.body, stream: true, stream_options: { ...streamOptions, include_usage: true } };
    const response = await this.post('/chat/completions', JSON.stringify(body), call.signal);
    return readOpenAIChatStream(response.body, this.upstreamId);
  }

  close(): Promise<void> {
    return this.client.close();
  }

  private async post(path: string, body: string, signal: AbortSignal): Promise<UpstreamResponse> {
    const response = await this.client.request({ path, method: 'POST', headers: this.headers, body, signal });
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    const text = await readErrorBody(response.body);
    const retryAfter = response.headers['retry-after'];
    throw mapOpenAIError(response.statusCode, text, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, this.upstreamId);
  }
}

export const createOpenAIAdapter: ProviderFactory = (upstream) => new OpenAIAdapter(upstream);

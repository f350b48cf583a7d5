import { GatewayError } from '../../errors/index.js';
import type { ChatCall, ChatCompletionResult, ChatStreamEvent } from '../provider-adapter.js';
import { ChunkQueue } from '../shared/chunk-queue.js';
import type { LlamaChatEngine } from './chat/llama-chat-engine.js';
import { convertLocalChatRequest } from './convert-local-chat-request.js';
import { JobLimiter } from './job-limiter.js';
import { chunkEvent, completionId, completionPayload, outcomeUsage, usageEvent } from './local-chat-response.js';
import { LocalEngineError } from './local-engine-error.js';
import { toGatewayError } from './worker-pool.js';

interface LoadedModel {
  engine: LlamaChatEngine;
  limiter: JobLimiter;
}

/**
 * Chat over the GGUF files found at start. llama.cpp runs generation on its own native threads,
 * so the event loop only relays tokens; each model is loaded on first use and serves as many
 * requests at once as it has sequences, with a bounded queue behind them.
 */
export class LocalChat {
  private readonly models = new Map<string, Promise<LoadedModel>>();

  constructor(
    private readonly files: ReadonlyMap<string, string>,
    private readonly maxQueue: number,
  ) {}

  async complete(call: ChatCall): Promise<ChatCompletionResult> {
    const request = convertOrThrow(call);
    const { engine, limiter } = await this.model(call.body.model);
    const signal = call.cancellation;
    const outcome = await limiter.run(() => engine.complete(request, null, signal), signal).catch(rethrow);
    const payload = completionPayload(completionId(), call.body.model, Math.floor(Date.now() / 1000), outcome);
    return { payload, usage: outcomeUsage(outcome), completionText: () => outcome.text };
  }

  /** Resolves once generation has started, so a busy engine is still refused before the first byte. */
  async stream(call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    const request = convertOrThrow(call);
    const { engine, limiter } = await this.model(call.body.model);
    const signal = call.cancellation;
    const id = completionId();
    const model = call.body.model;
    const created = Math.floor(Date.now() / 1000);
    const controller = new AbortController();
    signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
    // Generation cannot be paused; what it produces is small, so the queue only relays it.
    const events = new ChunkQueue<ChatStreamEvent>({ pause() {}, resume() {}, abort: () => controller.abort() }, Number.POSITIVE_INFINITY);
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const generation = limiter.run(async () => {
      // A model that cannot load fails the request before its first byte, so failover still applies.
      await engine.load();
      started();
      events.push(chunkEvent(id, model, created, { role: 'assistant', content: '' }, null));
      const outcome = await engine.complete(
        request,
        { onText: (text) => events.push(chunkEvent(id, model, created, { content: text }, null)) },
        controller.signal,
      );
      events.push(chunkEvent(id, model, created, {}, outcome.finishReason));
      events.push(usageEvent(id, model, created, outcome));
      events.end();
    }, signal);
    generation.catch((error: unknown) => events.fail(toGatewayErrorIfEngine(error)));
    await Promise.race([running, generation.then(() => undefined)]);
    return events;
  }

  async close(): Promise<void> {
    const models = [...this.models.values()];
    this.models.clear();
    await Promise.all(models.map(async (model) => (await model).engine.close()));
  }

  private model(name: string): Promise<LoadedModel> {
    let model = this.models.get(name);
    if (model !== undefined) return model;
    const path = this.files.get(name);
    if (path === undefined) return Promise.reject(new GatewayError('upstream_bad_request', `The local provider has no chat model '${name}'.`));
    // node-llama-cpp and its native library load with the first chat request: a gateway that serves no GGUF model never pays for them.
    model = import('./chat/llama-chat-engine.js').then(({ createLlamaChatEngine }) => {
      const engine = createLlamaChatEngine({ modelPath: path });
      return { engine, limiter: new JobLimiter({ concurrency: engine.maxConcurrency, maxQueue: this.maxQueue, engineName: `local chat (${name})` }) };
    });
    this.models.set(name, model);
    return model;
  }
}

function convertOrThrow(call: ChatCall) {
  try {
    return convertLocalChatRequest(call.body);
  } catch (error) {
    throw toGatewayErrorIfEngine(error);
  }
}

function toGatewayErrorIfEngine(error: unknown): unknown {
  return error instanceof LocalEngineError ? toGatewayError(error.kind, error.message, 'local chat') : error;
}

function rethrow(error: unknown): never {
  throw toGatewayErrorIfEngine(error);
}

import { LlamaChat, type ChatHistoryItem, type LlamaChatResponseChunk, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import { LocalEngineError } from '../local-engine-error.js';
import { acquireLlama, defaultLlamaThreads, releaseLlama } from './llama-runtime.js';
import { toChatHistory, type LocalChatMessage } from './to-chat-history.js';

export interface LocalChatRequest {
  messages: LocalChatMessage[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
  seed?: number;
}

export interface LocalChatStreamHandlers {
  onText(text: string): void;
}

export interface LocalChatOutcome {
  text: string;
  finishReason: 'stop' | 'length';
  promptTokens: number;
  /** Tokens the model generated for the answer (the end-of-turn token and stop strings excluded). */
  completionTokens: number;
}

export interface LlamaChatEngineOptions {
  /** A `.gguf` file, or the first part of a split model. */
  modelPath: string;
  /** Upper bound on tokens per request (prompt + answer); the model's trained context and 4096 also bound it. */
  contextSize?: number;
  /** CPU threads for evaluation; defaults to one less than the machine's cores. */
  threads?: number;
  /** Requests one model serves at once (context sequences, evaluated together in one batch). */
  maxConcurrency?: number;
}

/** Two sequences batch well on a 2-core machine; more only adds memory and waiting. */
export const defaultLlamaChatConcurrency = 2;
export const maximumLlamaContextSize = 4096;

// llama.cpp server's sampling defaults, used when a request leaves them out.
const defaultTemperature = 0.8;
const defaultTopP = 0.95;
const defaultTopK = 40;
const defaultMinP = 0.05;

interface LoadedModel {
  model: LlamaModel;
  context: LlamaContext;
  /** One chat per context sequence; a request borrows one and gives it back. */
  idleChats: LlamaChat[];
}

/**
 * A chat model served by llama.cpp from a GGUF file. The model loads on first use (concurrent first
 * calls share one load) and stays loaded until `close`. Each request is stateless: the whole
 * conversation is rendered with the model's own chat template on every call.
 */
export class LlamaChatEngine {
  readonly maxConcurrency: number;
  private readonly threads: number;
  private loading: Promise<LoadedModel> | null = null;
  private closed = false;

  constructor(private readonly options: LlamaChatEngineOptions) {
    this.maxConcurrency = Math.max(1, Math.floor(options.maxConcurrency ?? defaultLlamaChatConcurrency));
    this.threads = Math.max(1, Math.floor(options.threads ?? defaultLlamaThreads()));
  }

  /** Loads the model now instead of on the first request. Resolves to the context size in tokens. */
  async load(): Promise<number> {
    const loaded = await this.loaded();
    return loaded.context.contextSize;
  }

  async complete(request: LocalChatRequest, handlers: LocalChatStreamHandlers | null, signal: AbortSignal): Promise<LocalChatOutcome> {
    signal.throwIfAborted();
    const history = toChatHistory(request.messages);
    const sampling = samplingOptions(request);
    const loaded = await this.loaded();
    signal.throwIfAborted();
    if (this.closed) throw closedError();
    const chat = loaded.idleChats.pop();
    if (chat === undefined) {
      throw new LocalEngineError(
        'engine_failed',
        `the local model is already serving ${this.maxConcurrency} requests; the caller must not exceed maxConcurrency`,
      );
    }
    try {
      return await generate(chat, history, request, sampling, handlers, signal);
    } finally {
      if (!this.closed) loaded.idleChats.push(chat);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const loading = this.loading;
    if (loading === null) return;
    const loaded = await loading.catch(() => null);
    if (loaded === null) return;
    await loaded.context.dispose();
    await loaded.model.dispose();
    await releaseLlama(this.threads);
  }

  private loaded(): Promise<LoadedModel> {
    if (this.closed) return Promise.reject(closedError());
    if (this.loading === null) {
      const loading = this.loadModel();
      this.loading = loading;
      // A failed load is not kept: the operator may fix the file, and the next request retries.
      loading.catch(() => {
        if (this.loading === loading) this.loading = null;
      });
    }
    return this.loading;
  }

  private async loadModel(): Promise<LoadedModel> {
    let llama;
    try {
      llama = await acquireLlama(this.threads);
    } catch (error) {
      throw engineFailure('the llama.cpp runtime could not start on this machine', error);
    }
    let model: LlamaModel | undefined;
    try {
      model = await llama.loadModel({ modelPath: this.options.modelPath, gpuLayers: 0 });
      const contextSize = Math.min(
        model.trainContextSize,
        maximumLlamaContextSize,
        Math.max(1, Math.floor(this.options.contextSize ?? Number.POSITIVE_INFINITY)),
      );
      const context = await model.createContext({ contextSize, sequences: this.maxConcurrency, threads: this.threads });
      const idleChats: LlamaChat[] = [];
      for (let index = 0; index < this.maxConcurrency; index += 1) {
        idleChats.push(new LlamaChat({ contextSequence: context.getSequence() }));
      }
      return { model, context, idleChats };
    } catch (error) {
      await model?.dispose().catch(() => undefined);
      await releaseLlama(this.threads);
      throw engineFailure('the local model file could not be loaded', error);
    }
  }
}

export function createLlamaChatEngine(options: LlamaChatEngineOptions): LlamaChatEngine {
  return new LlamaChatEngine(options);
}

interface SamplingOptions {
  temperature: number;
  topP: number;
  topK: number;
  minP: number;
  seed: number | undefined;
  stop: string[];
}

function samplingOptions(request: LocalChatRequest): SamplingOptions {
  const { maxTokens, temperature, topP, stop, seed } = request;
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 1)) {
    throw new LocalEngineError('invalid_request', 'max_tokens must be a positive integer');
  }
  if (temperature !== undefined && !(temperature >= 0 && temperature <= 2)) {
    throw new LocalEngineError('invalid_request', 'temperature must be between 0 and 2');
  }
  if (topP !== undefined && !(topP > 0 && topP <= 1)) {
    throw new LocalEngineError('invalid_request', 'top_p must be greater than 0 and at most 1');
  }
  if (seed !== undefined && !Number.isInteger(seed)) {
    throw new LocalEngineError('invalid_request', 'seed must be an integer');
  }
  if (stop !== undefined && (!Array.isArray(stop) || stop.some((entry) => typeof entry !== 'string'))) {
    throw new LocalEngineError('invalid_request', 'stop must be an array of strings');
  }
  return {
    temperature: temperature ?? defaultTemperature,
    topP: topP ?? defaultTopP,
    topK: defaultTopK,
    minP: defaultMinP,
    // llama.cpp takes a 32-bit unsigned seed.
    seed: seed === undefined ? undefined : seed >>> 0,
    stop: (stop ?? []).filter((entry) => entry.length > 0),
  };
}

async function generate(
  chat: LlamaChat,
  history: ChatHistoryItem[],
  request: LocalChatRequest,
  sampling: SamplingOptions,
  handlers: LocalChatStreamHandlers | null,
  signal: AbortSignal,
): Promise<LocalChatOutcome> {
  const promptTokens = chat.chatWrapper.generateContextState({ chatHistory: history }).contextText.tokenize(chat.model.tokenizer).length;
  const contextSize = chat.sequence.contextSize;
  const room = contextSize - promptTokens;
  if (room < 1) {
    throw new LocalEngineError('invalid_request', `the conversation is ${promptTokens} tokens, which does not fit this model's ${contextSize}-token context`);
  }
  // Capping at the room left means llama.cpp never has to shift the context mid-answer.
  const maxTokens = Math.min(request.maxTokens ?? room, room);
  let completionTokens = 0;
  try {
    const response = await chat.generateResponse(history, {
      signal,
      maxTokens,
      temperature: sampling.temperature,
      topP: sampling.topP,
      topK: sampling.topK,
      minP: sampling.minP,
      seed: sampling.seed,
      customStopTriggers: sampling.stop.length > 0 ? sampling.stop : undefined,
      onResponseChunk(chunk: LlamaChatResponseChunk) {
        // Thought segments count as generated tokens, but only the answer is returned.
        completionTokens += chunk.tokens.length;
        if (chunk.type === undefined && chunk.text.length > 0) handlers?.onText(chunk.text);
      },
    });
    const reachedLimit = response.metadata.stopReason === 'maxTokens';
    return {
      text: response.response,
      finishReason: reachedLimit ? 'length' : 'stop',
      promptTokens,
      // node-llama-cpp stops at exactly maxTokens generated, but a last token it was holding back
      // (a possible start of a stop string, e.g. "<" before "<|im_end|>") never reaches a chunk.
      // It was generated all the same, so it counts.
      completionTokens: reachedLimit ? maxTokens : completionTokens,
    };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof LocalEngineError) throw error;
    throw engineFailure('the local model failed while generating', error);
  }
}

function closedError(): LocalEngineError {
  return new LocalEngineError('engine_failed', 'the local model has been closed');
}

/** The message is safe to show; the cause (paths, native details) stays for the worker's own logs. */
function engineFailure(message: string, cause: unknown): LocalEngineError {
  const error = new LocalEngineError('engine_failed', message);
  Object.defineProperty(error, 'cause', { value: cause, enumerable: false, configurable: true, writable: true });
  return error;
}

import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { EndpointConfig } from '../../config/index.js';
import { GatewayError } from '../../errors/index.js';
import type {
  Attempt,
  Capabilities,
  FullProvider,
  ChatCall,
  ChatCompletionResult,
  ChatStreamEvent,
  EmbeddingCall,
  EmbeddingLimits,
  EmbeddingResult,
  ProviderAdapter,
  OffModel,
  PreparationProgress,
  PublishedModel,
  RerankCall,
  RerankResult,
  SpeechCall,
  SpeechResult,
  TranscriptionCall,
  TranscriptionResult,
} from '../provider-adapter.js';
import { discoverGgufModels } from './chat/discover-gguf-models.js';
import { engineWorkerScript } from './engine-worker-script.js';
import type {
  EmbedParams,
  EmbedReply,
  PrepareTextReply,
  RerankParams,
  RerankReply,
  SpeakParams,
  SpeakReply,
  TranscribeParams,
  TranscribeReply,
} from './engine-methods.js';
import { LocalChat } from './local-chat.js';
import { wordVectorFiles } from './text/glove-table.js';
import { LOCAL_MODEL_IDS } from './local-model-ids.js';
import { findPocketsphinx } from './transcription/find-pocketsphinx.js';
import { WorkerPool } from './worker-pool.js';
import { readUpstreamKeys } from '../shared/upstream-keys.js';
import { LOCAL_UPSTREAM_KEYS } from './local-upstream-keys.js';

/** GloVe vectors: what one embedding is, whatever the request asks. */
const EMBEDDING_DIMENSIONS = 100;

/** Debian's packages (the recogniser and its US-English model); the gateway finds them on PATH at start. */
const TRANSCRIPTION_REMEDY = 'sudo apt-get install pocketsphinx pocketsphinx-en-us, then restart the gateway';

/**
 * The built-in `local` provider: engines that ship with the package (Flite speech, GloVe
 * embeddings, BM25 rerank), Debian's pocketsphinx for transcription when installed, and llama.cpp
 * over the GGUF files in `models_dir`. It is an upstream like any other: the same contract, the
 * same failover, the same request log.
 */

export class LocalAdapter implements ProviderAdapter, FullProvider {
  readonly endpoint: string;
  readonly capabilities: Capabilities = { chat: this, embedding: this, rerank: this, speech: this, transcription: this };
  readonly embeddingLimits: EmbeddingLimits = { maxInputs: 2048, maxTokens: Number.MAX_SAFE_INTEGER };
  private readonly published: PublishedModel[];
  private readonly off: OffModel[];
  private readonly chat: LocalChat;
  private readonly text: WorkerPool;
  private readonly speech: WorkerPool;
  private readonly transcription: WorkerPool | null;
  private readonly cacheDirectory: string;

  constructor(endpoint: EndpointConfig) {
    this.endpoint = endpoint.name;
    const keys = readUpstreamKeys(endpoint, LOCAL_UPSTREAM_KEYS);
    const cacheDirectory = resolve(keys.cache_dir ?? './data/local');
    mkdirSync(cacheDirectory, { recursive: true });
    this.cacheDirectory = cacheDirectory;
    const threads = keys.engine_threads ?? 1;
    const maxQueue = keys.engine_queue ?? 16;
    const script = engineWorkerScript();
    const workerData = { cacheDirectory };
    const pool = (engineName: string) => new WorkerPool({ script, workerData, threads, maxQueue, engineName });
    this.text = pool('local text');
    this.speech = pool('local speech');
    const pocketsphinx = findPocketsphinx();
    this.transcription = pocketsphinx === null ? null : pool('local transcription');
    const ggufModels = discoverGgufModels(resolve(keys.models_dir ?? './models'));
    this.chat = new LocalChat(new Map(ggufModels.map((model) => [model.id, model.path])), maxQueue);
    this.published =
      keys.publish_models === false
        ? []
        : [
            ...ggufModels.map((model) => ({ id: model.id, type: 'chat' as const })),
            { id: LOCAL_MODEL_IDS.embedding, type: 'embedding' as const },
            { id: LOCAL_MODEL_IDS.rerank, type: 'rerank' as const },
            { id: LOCAL_MODEL_IDS.speech, type: 'speech' as const },
            ...(this.transcription === null ? [] : [{ id: LOCAL_MODEL_IDS.transcription, type: 'transcription' as const }]),
          ];
    this.off =
      keys.publish_models === false || this.transcription !== null
        ? []
        : [{ id: LOCAL_MODEL_IDS.transcription, type: 'transcription', reason: 'pocketsphinx is not installed', remedy: TRANSCRIPTION_REMEDY }];
  }

  /**
   * Converts the word vectors of local-embed and local-rerank if they are not on disk yet (once
   * per install: ~3 s, ~137 MB in cache_dir), before the gateway listens: the first caller is not
   * the one who waits, and the wait is said. Loading them (~0.25 s) stays on first use, so that a
   * gateway nobody asks for embeddings does not hold 140 MB of vectors.
   */
  async prepare(progress: PreparationProgress): Promise<void> {
    let binaryPath: string;
    try {
      ({ binaryPath } = await wordVectorFiles({ cacheDirectory: this.cacheDirectory }));
    } catch (error) {
      progress.warn(
        `local: the word vectors of ${LOCAL_MODEL_IDS.embedding} cannot be prepared (${error instanceof Error ? error.message : String(error)}); ${LOCAL_MODEL_IDS.embedding} and ${LOCAL_MODEL_IDS.rerank} will fail`,
      );
      return;
    }
    if (existsSync(binaryPath)) return;
    progress.info(
      `local: preparing the word vectors of ${LOCAL_MODEL_IDS.embedding} and ${LOCAL_MODEL_IDS.rerank}, once per install: converting into ${binaryPath} (~137 MB, a few seconds)`,
    );
    const started = performance.now();
    try {
      await this.text.call<PrepareTextReply>('prepareText', {});
      progress.info(`local: word vectors ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } catch (error) {
      progress.warn(
        `local: converting the word vectors failed (${error instanceof Error ? error.message : String(error)}); the first ${LOCAL_MODEL_IDS.embedding} or ${LOCAL_MODEL_IDS.rerank} request tries again`,
      );
    }
  }

  offModels(): readonly OffModel[] {
    return this.off;
  }

  publishedModels(): readonly PublishedModel[] {
    return this.published;
  }

  chatCompletion(_attempt: Attempt, call: ChatCall): Promise<ChatCompletionResult> {
    return this.chat.complete(call);
  }

  streamChatCompletion(_attempt: Attempt, call: ChatCall): Promise<AsyncIterable<ChatStreamEvent>> {
    return this.chat.stream(call);
  }

  async embed(_attempt: Attempt, call: EmbeddingCall): Promise<EmbeddingResult> {
    this.expectModel(call.model, LOCAL_MODEL_IDS.embedding);
    if (call.dimensions !== undefined && call.dimensions !== EMBEDDING_DIMENSIONS) {
      throw new GatewayError(
        'upstream_bad_request',
        `${LOCAL_MODEL_IDS.embedding} produces ${EMBEDDING_DIMENSIONS} dimensions; 'dimensions' cannot change that.`,
        { param: 'dimensions' },
      );
    }
    const texts = call.inputs.map((input) => {
      if (typeof input !== 'string')
        throw new GatewayError('upstream_bad_request', `${LOCAL_MODEL_IDS.embedding} embeds text; token arrays are not supported.`, { param: 'input' });
      return input;
    });
    const reply = await this.text.call<EmbedReply>('embed', { texts } satisfies EmbedParams, call.cancellation);
    const vectors = new Float32Array(reply.vectors);
    return {
      vectors: texts.map((_, index) => {
        const vector = vectors.subarray(index * EMBEDDING_DIMENSIONS, (index + 1) * EMBEDDING_DIMENSIONS);
        return call.encodingFormat === 'base64' ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64') : Array.from(vector);
      }),
      promptTokens: null,
    };
  }

  async rerank(_attempt: Attempt, call: RerankCall): Promise<RerankResult> {
    this.expectModel(call.model, LOCAL_MODEL_IDS.rerank);
    const scores = await this.text.call<RerankReply>('rerank', { query: call.query, documents: call.documents } satisfies RerankParams, call.cancellation);
    return { scores: scores.map((score, index) => ({ index, score })), totalTokens: null };
  }

  async speak(_attempt: Attempt, call: SpeechCall): Promise<SpeechResult> {
    this.expectModel(call.model, LOCAL_MODEL_IDS.speech);
    const params: SpeakParams = { text: call.input, voice: call.voice, speed: call.speed, format: call.responseFormat };
    const reply = await this.speech.call<SpeakReply>('speak', params, call.cancellation);
    return { audio: chunksOf(Buffer.from(reply.audio)) };
  }

  async transcribe(_attempt: Attempt, call: TranscriptionCall): Promise<TranscriptionResult> {
    this.expectModel(call.model, LOCAL_MODEL_IDS.transcription);
    if (this.transcription === null) throw new GatewayError('upstream_error', 'Local transcription needs pocketsphinx, which is not installed.');
    const field = (name: string) => call.fields.find(([key]) => key === name)?.[1];
    const language = field('language');
    const params: TranscribeParams = {
      filePath: call.file.path,
      responseFormat: field('response_format') ?? 'json',
      timestampGranularities: call.fields.filter(([key]) => key === 'timestamp_granularities[]' || key === 'timestamp_granularities').map(([, value]) => value),
      ...(language === undefined ? {} : { language }),
    };
    const reply = await this.transcription.call<TranscribeReply>('transcribe', params, call.cancellation);
    return { contentType: reply.contentType, body: Buffer.from(reply.body) };
  }

  async close(): Promise<void> {
    await Promise.all([this.chat.close(), this.text.close(), this.speech.close(), this.transcription?.close()]);
  }

  private expectModel(requested: string, served: string): void {
    if (requested !== served) throw new GatewayError('upstream_bad_request', `The local provider serves this capability as '${served}', not '${requested}'.`);
  }
}

/** Audio made in one piece, handed to the client in pieces so a large answer is not one write. */
async function* chunksOf(audio: Buffer, size = 64 * 1024): AsyncIterableIterator<Buffer> {
  for (let offset = 0; offset < audio.length; offset += size) yield audio.subarray(offset, offset + size);
}

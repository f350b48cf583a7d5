import { parentPort, workerData } from 'node:worker_threads';
import type { EngineReply, EngineRequest } from './engine-protocol.js';
import type {
  EmbedParams,
  EmbedReply,
  EngineWorkerData,
  PrepareTextReply,
  RerankParams,
  RerankReply,
  SpeakParams,
  SpeakReply,
  TranscribeParams,
  TranscribeReply,
} from './engine-methods.js';
import { LocalEngineError } from './local-engine-error.js';

/**
 * An engine thread. It runs one call at a time (the pool sends no more), loading each engine's
 * code and data on its first call, so a thread that only ever speaks never loads word vectors.
 */

if (parentPort === null) throw new Error('engine-worker must run as a worker thread');
const port = parentPort;
const { cacheDirectory } = workerData as EngineWorkerData;

type Handler = (params: never, signal: AbortSignal) => Promise<{ result: unknown; transfer?: ArrayBuffer[] }>;

let wordVectors: Promise<import('./text/glove-table.js').WordVectors> | null = null;

function loadWordVectors() {
  wordVectors ??= import('./text/glove-table.js').then(({ loadWordVectors: load }) => load({ cacheDirectory }));
  return wordVectors;
}

const handlers: Record<string, Handler> = {
  async prepareText() {
    const { prepareWordVectors } = await import('./text/glove-table.js');
    return { result: { converted: await prepareWordVectors({ cacheDirectory }) } satisfies PrepareTextReply };
  },
  async embed({ texts }: EmbedParams) {
    const [{ embedText }, vectors] = await Promise.all([import('./text/embed-text.js'), loadWordVectors()]);
    const all = new Float32Array(texts.length * vectors.dimension);
    texts.forEach((text, index) => all.set(embedText(vectors, text), index * vectors.dimension));
    return { result: { vectors: all.buffer } satisfies EmbedReply, transfer: [all.buffer] };
  },
  async rerank({ query, documents }: RerankParams) {
    const [{ rerankDocuments }, vectors] = await Promise.all([import('./text/rerank-documents.js'), loadWordVectors()]);
    return { result: rerankDocuments(vectors, query, documents) satisfies RerankReply };
  },
  async speak({ text, voice, speed, format }: SpeakParams) {
    const { synthesizeSpeech, LOCAL_DEFAULT_VOICE } = await import('./speech/synthesize-speech.js');
    const speech = await synthesizeSpeech({ text, voice: voice ?? LOCAL_DEFAULT_VOICE, speed, format });
    const audio = speech.audio.buffer.slice(speech.audio.byteOffset, speech.audio.byteOffset + speech.audio.byteLength) as ArrayBuffer;
    return { result: { audio, contentType: speech.contentType } satisfies SpeakReply, transfer: [audio] };
  },
  async transcribe({ filePath, language, responseFormat, timestampGranularities }: TranscribeParams, signal) {
    const [{ transcribeAudio }, { formatTranscription }] = await Promise.all([
      import('./transcription/transcribe-audio.js'),
      import('./transcription/format-transcription.js'),
    ]);
    const outcome = await transcribeAudio({ filePath, workDirectory: cacheDirectory, ...(language === undefined ? {} : { language }) }, signal);
    return { result: formatTranscription(outcome, responseFormat, { timestampGranularities }) satisfies TranscribeReply };
  },
};

const running = new Map<number, AbortController>();

port.on('message', (message: EngineRequest) => {
  if ('cancel' in message) {
    running.get(message.cancel)?.abort();
    return;
  }
  void handle(message.id, message.method, message.params);
});

async function handle(id: number, method: string, params: unknown): Promise<void> {
  const controller = new AbortController();
  running.set(id, controller);
  try {
    const handler = handlers[method];
    if (handler === undefined) throw new LocalEngineError('engine_failed', `unknown engine method ${method}`);
    const { result, transfer = [] } = await handler(params as never, controller.signal);
    port.postMessage({ id, ok: true, result } satisfies EngineReply, transfer);
  } catch (error) {
    // An engine's own message is written for users; anything else may name paths, so it travels only as detail for the log.
    const failure =
      error instanceof LocalEngineError
        ? { kind: error.kind, message: error.message }
        : {
            kind: 'engine_failed' as const,
            message: 'unexpected engine failure',
            detail: error instanceof Error ? (error.stack ?? error.message) : String(error),
          };
    port.postMessage({ id, ok: false, error: failure } satisfies EngineReply);
  } finally {
    running.delete(id);
  }
}

/** What the gateway asks of an engine worker, method by method, and what it answers. */

export interface EngineWorkerData {
  /** Converted engine data (word vectors) and scratch files. */
  cacheDirectory: string;
}

/** The text engine's data is on disk: `converted` when it had to be made now. */
export interface PrepareTextReply {
  converted: boolean;
}

export interface EmbedParams {
  texts: string[];
}

export interface EmbedReply {
  /** Every vector, one after another, as float32: moved between threads, not copied. */
  vectors: ArrayBuffer;
}

export interface RerankParams {
  query: string;
  documents: readonly string[];
}

/** One score in [0, 1] per document, in document order. */
export type RerankReply = number[];

export interface SpeakParams {
  text: string;
  voice: string | undefined;
  speed: number;
  format: string;
}

export interface SpeakReply {
  audio: ArrayBuffer;
  contentType: string;
}

export interface TranscribeParams {
  filePath: string;
  language?: string;
  responseFormat: string;
  /** OpenAI's `timestamp_granularities[]`: `segment` and/or `word`, for verbose_json. */
  timestampGranularities: string[];
}

export interface TranscribeReply {
  contentType: string;
  body: string;
}

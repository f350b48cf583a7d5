import { Type } from '@sinclair/typebox';

/** The built-in `local` provider's own keys; its adapter applies the defaults named here. */
export const LOCAL_UPSTREAM_KEYS = {
  publish_models: Type.Optional(Type.Boolean({ description: 'offer the built-in models and one chat model per GGUF file without listing them under models (default true)' })),
  models_dir: Type.Optional(Type.String({ minLength: 1, description: 'where GGUF chat models are found (default ./models)' })),
  cache_dir: Type.Optional(Type.String({ minLength: 1, description: 'converted engine data and scratch files (default ./data/local)' })),
  engine_threads: Type.Optional(Type.Integer({ minimum: 1, description: 'worker threads per engine: speech, text, transcription (default 1)' })),
  engine_queue: Type.Optional(Type.Integer({ minimum: 0, description: 'requests that may wait for a busy engine before it answers 503 engine_busy (default 16)' })),
};

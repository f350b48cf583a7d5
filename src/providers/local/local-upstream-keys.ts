import { Type } from '@sinclair/typebox';

/** The built-in `local` provider's own keys; its adapter applies the defaults named here. */
export const LOCAL_UPSTREAM_KEYS = {
  publish_models: Type.Optional(
    Type.Boolean({
      documentedDefault: '`true`',
      description: 'offer the built-in models and one chat model per GGUF file without listing them under `models` (docs/local-provider.md)',
    }),
  ),
  models_dir: Type.Optional(
    Type.String({ minLength: 1, documentedDefault: '`./models`', description: 'where GGUF chat models are found (docs/local-provider.md)' }),
  ),
  cache_dir: Type.Optional(
    Type.String({ minLength: 1, documentedDefault: '`./data/local`', description: 'converted engine data and scratch files (docs/local-provider.md)' }),
  ),
  engine_threads: Type.Optional(
    Type.Integer({ minimum: 1, documentedDefault: '`1`', description: 'worker threads per engine: speech, text, transcription (docs/local-provider.md)' }),
  ),
  engine_queue: Type.Optional(
    Type.Integer({
      minimum: 0,
      documentedDefault: '`16`',
      description: 'requests that may wait for a busy engine before it answers 503 `engine_busy` (docs/local-provider.md)',
    }),
  ),
};

/** The ids under which the local provider publishes its built-in models. */
export const LOCAL_MODEL_IDS = {
  speech: 'local-speech',
  transcription: 'local-transcribe',
  embedding: 'local-embed',
  rerank: 'local-rerank',
} as const;

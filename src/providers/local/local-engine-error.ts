/**
 * What a local engine throws. Engines run inside worker threads, so the error crosses a thread
 * boundary as plain data ({ kind, message }); the adapter turns it back into a GatewayError.
 */
export type LocalEngineErrorKind = 'invalid_request' | 'engine_failed';

export class LocalEngineError extends Error {
  override readonly name = 'LocalEngineError';

  constructor(
    readonly kind: LocalEngineErrorKind,
    message: string,
  ) {
    super(message);
  }
}

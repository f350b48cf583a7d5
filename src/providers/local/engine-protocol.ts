import type { LocalEngineErrorKind } from './local-engine-error.js';

/** Messages between the gateway and an engine worker thread. */
export type EngineRequest = { id: number; method: string; params: unknown } | { cancel: number };

export type EngineReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { kind: LocalEngineErrorKind; message: string; detail?: string } };

import type { RequestLogEntry } from '../../src/store/index.js';

/** A gateway id: `req_` + 12 hex digits of milliseconds + 20 more (here a counter). */
export function requestIdAt(milliseconds: number, serial: number): string {
  return `req_${milliseconds.toString(16).padStart(12, '0')}${serial.toString(16).padStart(20, '0')}`;
}

let serial = 0;

/** A served chat request of token `tok_a` (team `search`, project `ranker`) that started at `startedAt`, with a unique time-ordered id. */
export function requestLogEntry(startedAt: number, overrides: Partial<RequestLogEntry> = {}): RequestLogEntry {
  serial += 1;
  return {
    id: requestIdAt(startedAt, serial),
    clientRequestId: null,
    createdAt: startedAt,
    tokenId: 'tok_a',
    team: 'search',
    project: 'ranker',
    endpoint: 'chat.completions',
    model: 'gpt-4o-mini',
    upstream: 'openai-a',
    upstreamModel: 'gpt-4o-mini-2024-07-18',
    sessionId: null,
    status: 200,
    latencyMs: 120,
    ttfbMs: 30,
    promptTokens: 10,
    completionTokens: 5,
    cachedTokens: 2,
    cacheWriteTokens: null,
    reasoningTokens: null,
    costUsd: 0.001,
    clientAddress: '127.0.0.1',
    worker: null,
    usageSource: 'upstream',
    errorCode: null,
    sessionSource: null,
    affinity: null,
    attempts: [{ credential: 'openai-a', outcome: 'ok', status: 200, ms: 110 }],
    ...overrides,
  };
}

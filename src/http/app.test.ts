import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenAuthenticator, TokenService } from '../access/index.js';
import { createLogger } from '../observability/logger.js';
import type { ProviderAdapter } from '../providers/provider-adapter.js';
import { ChatCompletionService, EmbeddingService, ModelCatalog, RerankService, SpeechService, TranscriptionService } from '../routing/index.js';
import { openStores, watchTokenChanges, type Stores } from '../store/index.js';
import { RequestLogQueue, RequestRecorder } from '../usage/index.js';
import { buildApp } from './app.js';

/** A provider with a bug: it throws something that is not a GatewayError. */
const brokenAdapter: ProviderAdapter = {
  upstreamId: 'broken',
  capabilities: new Set(['chat']),
  chatCompletion: async () => {
    throw new TypeError('cannot read properties of undefined (internal detail sk-secret-123)');
  },
  streamChatCompletion: async () => {
    throw new TypeError('stream internal detail');
  },
  close: async () => undefined,
};

let stores: Stores;
let token: string;
const logLines: Array<Record<string, unknown>> = [];
let app: ReturnType<typeof buildApp>;

beforeAll(async () => {
  stores = await openStores('sqlite::memory:');
  const watcher = watchTokenChanges(stores.database, stores.tokens, 0, { pollIntervalMs: 1_000 });
  const authenticator = new TokenAuthenticator(stores.tokens, watcher, 'svc_');
  const tokens = new TokenService(stores.tokens, 'svc_', Date.now, () => authenticator.invalidate());
  token = (await tokens.create({ team: 'bugs' })).secret;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const catalog = new ModelCatalog([
    { id: 'broken-chat', type: 'chat', ownedBy: 'test', created: 0, totalWeight: 1, routes: [{ upstreamId: 'broken', upstreamModel: 'm', weight: 1, adapter: brokenAdapter }] },
  ]);
  const queue = new RequestLogQueue(stores.requestLogs, { batchSize: 10, flushIntervalMs: 10, maxQueue: 100 });
  app = buildApp({
    logger: createLogger('info', sink),
    authenticator,
    recorder: new RequestRecorder(queue),
    catalog,
    chat: new ChatCompletionService(catalog),
    embeddings: new EmbeddingService(catalog),
    reranker: new RerankService(catalog),
    speech: new SpeechService(catalog),
    transcriptions: new TranscriptionService(catalog, undefined),
    bodyLimitBytes: 1024 * 1024,
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await stores.close();
});

describe('a bug behind an endpoint', () => {
  for (const stream of [false, true]) {
    it(`answers 500 without internals and logs the error with the request id (stream: ${stream})`, async () => {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { authorization: `Bearer ${token}`, 'x-request-id': `bug-${stream}` },
        payload: { model: 'broken-chat', messages: [{ role: 'user', content: 'Hi' }], stream },
      });
      expect(response.statusCode).toBe(500);
      expect(response.headers['x-request-id']).toBe(`bug-${stream}`);
      const body = response.json() as { error: Record<string, unknown> };
      expect(body.error).toEqual({
        message: 'The gateway failed to handle this request; quote the request id when reporting it.',
        type: 'server_error',
        code: 'internal_error',
        param: null,
      });
      expect(response.body).not.toContain('internal detail');
      const logged = logLines.find((line) => line['requestId'] === `bug-${stream}`);
      expect(logged).toMatchObject({ level: 50, msg: 'unhandled error' });
      expect(JSON.stringify(logged)).toContain('internal detail');
    });
  }
});

describe('logger', () => {
  it('redacts credentials wherever they appear', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger('info', sink);
    logger.info({ headers: { authorization: `Bearer ${token}` }, upstream: { api_key: 'sk-live-abc', access_token: 'oauth-xyz' } }, 'request');
    expect(lines.join('')).not.toContain(token);
    expect(lines.join('')).not.toContain('sk-live-abc');
    expect(lines.join('')).not.toContain('oauth-xyz');
    expect(lines.join('')).toContain('[redacted]');
  });
});

import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenAuthenticator, TokenService } from '../access/index.js';
import { TrustedProxies } from '../core/index.js';
import { createLogger } from '../observability/logger.js';
import type { ChatProvider } from '../providers/provider-adapter.js';
import { ModelCatalog, Router } from '../routing/index.js';
import { CredentialAdmin, credentialRoutes, UpstreamAccounts } from '../admin/index.js';
import {
  ChatCompletionService,
  NativeService,
  EmbeddingService,
  RerankService,
  MessagesService,
  ResponsesService,
  ResponseStore,
  SpeechService,
  TranscriptionService,
} from '../services/index.js';
import { openStores, watchTokenChanges, type Stores } from '../store/index.js';
import { RequestLogQueue, RequestRecorder } from '../usage/index.js';
import { buildApp } from './app.js';
import { PausedStreams } from './paused-streams.js';
import { RequestGate } from './request-gate.js';

/** A chat provider with a bug: it throws something that is not a GatewayError. */
const brokenChat: ChatProvider = {
  chatCompletion: async () => {
    throw new TypeError('cannot read properties of undefined (internal detail sk-secret-123)');
  },
  streamChatCompletion: async () => {
    throw new TypeError('stream internal detail');
  },
};

/** A chat provider that answers every chat request with the same completion, and counts the calls. */
let echoCalls = 0;
const echoChat: ChatProvider = {
  chatCompletion: async () => {
    echoCalls++;
    return {
      payload: Buffer.from('{"object":"chat.completion","choices":[]}'),
      usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
      completionText: () => '',
    };
  },
  streamChatCompletion: async () => {
    throw new TypeError('not used');
  },
};

let stores: Stores;
let url: string;
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
    {
      id: 'broken-chat',
      type: 'chat',
      ownedBy: 'test',
      created: 0,
      totalWeight: 1,
      strategy: 'weighted',
      routes: [
        {
          credential: { id: 'broken', apiKey: undefined, headers: {} },
          upstreamModel: 'm',
          weight: 1,
          priority: 0,
          maxInFlight: null,
          credentialHash: 0,
          provider: brokenChat,
          native: null,
          responses: null,
        },
      ],
    },
    {
      id: 'echo-chat',
      type: 'chat',
      ownedBy: 'test',
      created: 0,
      totalWeight: 1,
      strategy: 'weighted',
      routes: [
        {
          credential: { id: 'echo', apiKey: undefined, headers: {} },
          upstreamModel: 'm',
          weight: 1,
          priority: 0,
          maxInFlight: null,
          credentialHash: 0,
          provider: echoChat,
          native: null,
          responses: null,
        },
      ],
    },
  ]);
  const queue = new RequestLogQueue(stores.requestLogs, { batchSize: 10, flushIntervalMs: 10, maxQueue: 100 });
  const recorder = new RequestRecorder(queue);
  const logger = createLogger('info', sink);
  const router = new Router();
  const credentials = new CredentialAdmin(
    new Map([
      ['broken', { provider: 'openai' as const }],
      ['echo', { provider: 'openai' as const }],
    ]),
    router.health,
    router.inFlight,
  );
  app = buildApp({
    logger,
    authenticator,
    recorder,
    catalog,
    chat: new ChatCompletionService(catalog, router),
    responses: new ResponsesService(
      catalog,
      router,
      new ResponseStore(
        { get: async () => null, setWithinBudget: async () => ({ stored: true, evicted: 0 }) },
        60_000,
        { teamBytes: 1_000_000, totalBytes: 1_000_000 },
        () => undefined,
      ),
    ),
    messages: new MessagesService(catalog, router),
    native: new NativeService(catalog, router),
    adminRoutes: credentialRoutes(credentials, new UpstreamAccounts(stores.upstreamAccounts, null, () => ({ accountId: 'none' }), new Set())),
    embeddings: new EmbeddingService(catalog, router),
    reranker: new RerankService(catalog, router),
    speech: new SpeechService(catalog, router),
    transcriptions: new TranscriptionService(catalog, router, undefined),
    gate: new RequestGate(authenticator, recorder),
    console: null,
    pausedStreams: new PausedStreams(60_000, () => ({ name: 'test', size: 8 }), logger),
    limits: {
      bodyLimitBytes: 1024,
      bodyTimeoutMs: 30_000,
      maxConnections: 100,
      maxConnectionsPerClient: 0,
      headerTimeoutMs: 10_000,
      corsOrigins: [],
      trustedProxies: TrustedProxies.none,
    },
  });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app.close();
  await stores.close();
});

describe('a bug behind an endpoint', () => {
  for (const stream of [false, true]) {
    it(`answers 500 without internals and logs the error with the request id (stream: ${stream})`, async () => {
      const response = await postChat({ model: 'broken-chat', messages: [{ role: 'user', content: 'Hi' }], stream }, { 'x-request-id': `bug-${stream}` });
      expect(response.status).toBe(500);
      expect(response.headers['x-request-id']).toBe(`bug-${stream}`);
      const body = JSON.parse(response.text) as { error: Record<string, unknown> };
      expect(body.error).toEqual({
        message: 'The gateway failed to handle this request; quote the request id when reporting it.',
        type: 'server_error',
        code: 'internal_error',
        param: null,
      });
      expect(response.text).not.toContain('internal detail');
      const logged = logLines.find((line) => line['clientRequestId'] === `bug-${stream}`);
      expect(logged).toMatchObject({ level: 50, msg: 'unhandled error' });
      expect(logged?.['requestId']).toMatch(/^req_/);
      expect(JSON.stringify(logged)).toContain('internal detail');
    });
  }
});

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function postChat(body: unknown, headers: Record<string, string> = {}, path = '/v1/chat/completions'): Promise<RawAnswer> {
  const response = await request(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

/** Raw bytes on a fresh connection, for what an HTTP client library would not send; resolves with what came back before the server closed or went quiet. */
function rawExchange(bytes: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    setTimeout(() => socket.destroy(), 500).unref();
  });
}

const HELLO = { model: 'echo-chat', messages: [{ role: 'user', content: 'Hi' }] };

describe('the chat route, through the same pipeline as every route', () => {
  it('answers with the upstream payload and the gateway request id', async () => {
    const response = await postChat(HELLO);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.text).toBe('{"object":"chat.completion","choices":[]}');
    expect(response.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
  });

  it('routes by path whatever the query string, and nothing else', async () => {
    expect((await postChat(HELLO, {}, '/v1/chat/completions?trace=1')).status).toBe(200);
    expect((await postChat(HELLO, {}, '/v1/chat/completions/')).status).toBe(404);
    const get = await request(`${url}/v1/chat/completions`, { headers: { authorization: `Bearer ${token}` } });
    expect(get.statusCode).toBe(404);
    expect(((await get.body.json()) as { error: { code: string } }).error.code).toBe('route_not_found');
  });

  it('reads a chunked body', async () => {
    const body = JSON.stringify(HELLO);
    const answer = await rawExchange(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
        `5\r\n${body.slice(0, 5)}\r\n${(body.length - 5).toString(16)}\r\n${body.slice(5)}\r\n0\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1.1 200 /);
  });

  it('refuses what the Fastify routes refuse, in the same words', async () => {
    const cases: Array<[string, Record<string, string>, number, string]> = [
      ['{"model":', {}, 400, 'invalid_json'],
      ['', {}, 400, 'invalid_json'],
      ['{"__proto__":{"admin":true},"model":"echo-chat"}', {}, 400, 'invalid_json'],
      ['{"constructor":{"prototype":{"admin":true}}}', {}, 400, 'invalid_json'],
      ['[]', {}, 400, 'invalid_body'],
      [JSON.stringify(HELLO), { 'content-type': 'text/plain' }, 400, 'unsupported_media_type'],
      [JSON.stringify(HELLO), { 'content-type': 'application/json; charset=utf-8' }, 200, ''],
      [JSON.stringify(HELLO), { 'content-type': 'Application/JSON' }, 200, ''],
      [JSON.stringify(HELLO), { authorization: 'Bearer svc_wrong' }, 401, 'invalid_api_key'],
    ];
    for (const [body, headers, status, code] of cases) {
      const callsBefore = echoCalls;
      const response = await postChat(body, headers);
      expect([body, response.status]).toEqual([body, status]);
      // A refused request never reaches the upstream; an accepted one does, once.
      expect([body, echoCalls - callsBefore]).toEqual([body, status === 200 ? 1 : 0]);
      if (code !== '') expect([body, (JSON.parse(response.text) as { error: { code: string } }).error.code]).toEqual([body, code]);
    }
  });

  it('refuses a body over the cap with 413 and closes the connection, whether its length is declared or not', async () => {
    const big = JSON.stringify({ ...HELLO, padding: 'x'.repeat(2048) });
    const declared = await postChat(big);
    expect(declared.status).toBe(413);
    expect(declared.headers['connection']).toBe('close');
    const callsBefore = echoCalls;
    const streamed = await rawExchange(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
        `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`,
    );
    expect(streamed).toMatch(/^HTTP\/1.1 413 /);
    expect(streamed.toLowerCase()).toContain('connection: close');
    expect(echoCalls).toBe(callsBefore);
  });

  it('checks the token before reading the body', async () => {
    const answer = await rawExchange(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`);
    expect(answer).toMatch(/^HTTP\/1.1 401 /);
    expect(answer).toContain('missing_api_key');
  });
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

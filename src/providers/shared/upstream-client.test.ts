import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { testAttempt, testCredential, testEndpoint } from '../../../test/support/attempts.js';
import { UpstreamClient, type UpstreamRequest } from './upstream-client.js';

const FIRST_BYTE_MS = 150;
const IDLE_MS = 100;

type Behaviour = (request: IncomingMessage, response: ServerResponse) => void;
const behaviours: Record<string, Behaviour> = {
  '/v1/silent': () => undefined,
  '/v1/upload': (request, response) => {
    let bytes = 0;
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => response.end(String(bytes)));
  },
  '/v1/stalls': (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: one\n\n');
  },
  '/v1/trickle': (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    let sent = 0;
    const timer = setInterval(() => {
      response.write(`${sent},`);
      if (++sent === 8) {
        clearInterval(timer);
        response.end();
      }
    }, IDLE_MS / 2);
  },
  '/v1/many-chunks': (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    let sent = 0;
    const timer = setInterval(() => {
      response.write(`${sent},`);
      if (++sent === 200) {
        clearInterval(timer);
        response.end();
      }
    }, 1);
  },
};

let server: Server;
let client: UpstreamClient;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url !== '/v1/upload') request.resume();
    behaviours[request.url ?? '']?.(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  client = new UpstreamClient(
    `http://127.0.0.1:${port}/v1`,
    testEndpoint({ provider: 'openai', timeouts: { connect_ms: 1_000, first_byte_ms: FIRST_BYTE_MS, idle_ms: IDLE_MS } }),
  );
});
afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function get(path: string): UpstreamRequest {
  return { path, method: 'GET', headers: {}, cancellation: new AbortController().signal, attempt: testAttempt(testCredential('timing')) };
}

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

async function readAll(body: AsyncIterable<Buffer>): Promise<string> {
  let text = '';
  for await (const chunk of body) text += chunk.toString();
  return text;
}

describe('UpstreamClient timeouts', () => {
  it('gives up on an upstream that sends no headers within first_byte_ms', async () => {
    const started = performance.now();
    const error = await failure(client.requestBuffered(get('/silent')));
    expect(error.code).toBe('upstream_timeout');
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/no response headers within 150 ms/);
    expect(performance.now() - started).toBeGreaterThanOrEqual(FIRST_BYTE_MS - 1);
  });

  it('does not count a slow upload against first_byte_ms', async () => {
    async function* slowly(): AsyncGenerator<Buffer> {
      for (let part = 0; part < 4; part++) {
        yield Buffer.alloc(1_000, 1);
        await sleep(FIRST_BYTE_MS / 2);
      }
    }
    const response = await client.requestBuffered({
      path: '/upload',
      method: 'POST',
      headers: { 'content-length': '4000' },
      body: Readable.from(slowly()),
      cancellation: new AbortController().signal,
      attempt: testAttempt(),
    });
    expect(response.body.toString()).toBe('4000');
  });

  it('gives up on a body that goes silent for idle_ms, buffered or streamed', async () => {
    const buffered = await failure(client.requestBuffered(get('/stalls')));
    expect(buffered.code).toBe('upstream_timeout');
    expect(buffered.message).toMatch(/sent nothing for 100 ms/);

    const stream = await client.openStream(get('/stalls'));
    if (!stream.ok) throw new Error('expected a 2xx stream');
    const streamed = await failure(readAll(stream.body));
    expect(streamed.code).toBe('upstream_timeout');
  });

  it('lets a body run longer than idle_ms as long as its chunks keep coming', async () => {
    const response = await client.requestBuffered(get('/trickle'));
    expect(response.body.toString()).toBe('0,1,2,3,4,5,6,7,');
    const stream = await client.openStream(get('/trickle'));
    if (!stream.ok) throw new Error('expected a 2xx stream');
    expect(await readAll(stream.body)).toBe('0,1,2,3,4,5,6,7,');
    expect(client.timedCalls).toBe(0);
  });

  it('does not count the time a slow reader keeps the body paused', async () => {
    const stream = await client.openStream(get('/many-chunks'));
    if (!stream.ok) throw new Error('expected a 2xx stream');
    await sleep(IDLE_MS * 4);
    const text = await readAll(stream.body);
    expect(text.split(',').filter(Boolean)).toHaveLength(200);
    expect(client.timedCalls).toBe(0);
  });
});

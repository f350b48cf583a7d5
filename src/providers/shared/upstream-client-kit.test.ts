import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isObject, type JsonObject } from '../../core/index.js';
import { GatewayError } from '../../errors/index.js';
import { testAttempt, testCredential, testEndpoint } from '../../../test/support/attempts.js';
import type { ErrorDialect } from './classify-upstream-failure.js';
import type { JsonGuard } from './json-guard.js';
import type { EventReader } from './read-events.js';
import type { ServerSentEvent } from './server-sent-events.js';
import { UpstreamClient, type UpstreamRequest } from './upstream-client.js';

/** The kit's calls against a real server: postJson, requestOk, openBody and openEvents. */
type Behaviour = (request: IncomingMessage, response: ServerResponse) => void;
const json =
  (status: number, body: string, headers: Record<string, string> = {}): Behaviour =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(body);
  };
const events =
  (body: string, contentType = 'text/event-stream'): Behaviour =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': contentType });
    response.end(body);
  };
const behaviours: Record<string, Behaviour> = {
  '/v1/greeting': json(200, '{"greeting":"hello"}'),
  '/v1/list': json(200, '[1,2]'),
  '/v1/html': json(200, '<html>oops</html>'),
  '/v1/refused': json(429, '{"problem":"slow down"}', { 'retry-after': '9', 'x-ratelimit-remaining-requests': '0' }),
  '/v1/events': events('data: {"n":1}\n\n: keep-alive\n\ndata: {"n":2}\n\ndata: [DONE]\n\ndata: {"n":3}\n\n'),
  '/v1/cut': events('data: {"n":1}\n\n'),
  '/v1/page': events('<html></html>', 'text/html; charset=utf-8'),
  '/v1/forbidden': json(403, '{"problem":"bad key"}'),
  '/v1/bytes': (_request, response) => {
    response.writeHead(200, { 'content-type': 'audio/mpeg' });
    response.write('ab');
    response.end('cd');
  },
};

/** A dialect of this test's upstream: `{"problem": …}`. */
const dialect: ErrorDialect = {
  read(_status, bodyText) {
    const body = JSON.parse(bodyText) as unknown;
    return isObject(body) && typeof body['problem'] === 'string' ? { message: body['problem'] } : null;
  },
};

const greetingGuard: JsonGuard<{ greeting: string }> = {
  expected: 'a greeting',
  unparsed: 'JSON',
  test: (value): value is { greeting: string } => isObject(value) && typeof value['greeting'] === 'string',
};

/** Numbers until `[DONE]`; a stream that ends before it is cut short. */
class NumberReader implements EventReader<number> {
  done = false;
  read(event: ServerSentEvent): number | undefined {
    if (event.data === '[DONE]') {
      this.done = true;
      return undefined;
    }
    return (JSON.parse(event.data) as { n: number }).n;
  }
  end(): number | undefined {
    throw new GatewayError('upstream_error', 'the stream ended before [DONE]');
  }
}

let server: Server;
let client: UpstreamClient;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    behaviours[request.url ?? '']?.(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  client = new UpstreamClient(`http://127.0.0.1:${port}/v1`, testEndpoint({ provider: 'openai' }));
});
afterAll(async () => {
  await client.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function post(path: string): UpstreamRequest {
  return { path, method: 'POST', headers: {}, body: '{}', cancellation: new AbortController().signal, attempt: testAttempt(testCredential('kit')) };
}

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of items) seen.push(item);
  return seen;
}

describe('UpstreamClient.postJson', () => {
  it('gives the checked value with the bytes as they came', async () => {
    const response = await client.postJson(post('/greeting'), dialect, greetingGuard);
    expect(response.value.greeting).toBe('hello');
    expect(response.body.toString()).toBe('{"greeting":"hello"}');
    expect(response.statusCode).toBe(200);
  });

  it('fails a 2xx body its guard refuses, naming what it should have been', async () => {
    expect((await failure(client.postJson(post('/list'), dialect, greetingGuard))).message).toBe('Upstream kit answered with a body that is not a greeting.');
    expect((await failure(client.postJson(post('/html'), dialect, greetingGuard))).message).toBe('Upstream kit answered with a body that is not JSON.');
    const unnamed: JsonGuard<JsonObject> = { expected: 'an object', test: isObject };
    const error = await failure(client.postJson(post('/html'), dialect, unnamed));
    expect(error).toMatchObject({ code: 'upstream_invalid_response', retryable: true, message: 'Upstream kit answered with a body that is not an object.' });
  });

  it('maps an error answer through the dialect and the one classifier', async () => {
    const error = await failure(client.postJson(post('/refused'), dialect, greetingGuard));
    expect(error).toMatchObject({ code: 'upstream_rate_limited', retryAfterSeconds: 9, message: 'Upstream kit is rate limiting: slow down' });
    expect(error.upstream).toMatchObject({
      class: 'rate_limit',
      status: 429,
      credentialId: 'kit',
      rateLimitHeaders: { 'retry-after': '9', 'x-ratelimit-remaining-requests': '0' },
    });
  });
});

describe('UpstreamClient.requestOk and openBody', () => {
  it('give a 2xx answer whole or as it arrives, an event stream only when asked for one', async () => {
    expect((await failure(client.openBody(post('/bytes'), dialect, true))).message).toBe(
      'Upstream kit answered a stream request with audio/mpeg instead of an event stream.',
    );
    const events = await client.openBody(post('/events'), dialect, true);
    expect(Buffer.concat(await collect(events.body)).toString()).toContain('data: [DONE]');
    expect((await client.requestOk(post('/bytes'), dialect)).body.toString()).toBe('abcd');
    const opened = await client.openBody(post('/bytes'), dialect);
    expect(Buffer.concat(await collect(opened.body)).toString()).toBe('abcd');
  });

  it('map an error answer through the dialect', async () => {
    expect(await failure(client.requestOk(post('/forbidden'), dialect))).toMatchObject({
      code: 'upstream_auth_failed',
      message: "Upstream kit refused the gateway's credential (status 403): bad key",
    });
    expect(await failure(client.openBody(post('/forbidden'), dialect))).toMatchObject({ code: 'upstream_auth_failed' });
  });
});

describe('UpstreamClient.openEvents', () => {
  it('reads the events through the reader until it is done, skipping comments', async () => {
    expect(await collect(await client.openEvents(post('/events'), dialect, new NumberReader()))).toEqual([1, 2]);
  });

  it('asks the reader what a stream that ended early means', async () => {
    const stream = await client.openEvents(post('/cut'), dialect, new NumberReader());
    const seen: number[] = [];
    const error = await failure(
      (async () => {
        for await (const item of stream) seen.push(item);
      })(),
    );
    expect(seen).toEqual([1]);
    expect(error.message).toBe('the stream ended before [DONE]');
  });

  it('refuses a 2xx answer that is not an event stream, and maps an error answer', async () => {
    expect((await failure(client.openEvents(post('/page'), dialect, new NumberReader()))).message).toBe(
      'Upstream kit answered a stream request with text/html instead of an event stream.',
    );
    expect(await failure(client.openEvents(post('/refused'), dialect, new NumberReader()))).toMatchObject({
      code: 'upstream_rate_limited',
      retryAfterSeconds: 9,
    });
  });
});

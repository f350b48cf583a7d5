import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * `upstreams[]` lists credentials; the gateway derives endpoints from them. Entries to one origin
 * that differ only in their credential share one adapter and one connection pool, and each
 * request carries the credential the router chose.
 */
let upstream: Server;
let test: TestGateway;
const seen: Array<{ authorization: string | undefined; organization: string | undefined; port: number | undefined }> = [];

beforeAll(async () => {
  upstream = createServer((request, response) => {
    seen.push({
      authorization: request.headers.authorization,
      organization: request.headers['openai-organization'] as string | undefined,
      port: request.socket.remotePort,
    });
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const address = upstream.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/v1`;
  test = await startTestGateway({
    upstreams: [
      { id: 'key-a', provider: 'openai', base_url: base, api_key: 'sk-a' },
      { id: 'key-b', provider: 'openai', base_url: base, api_key: 'sk-b', headers: { 'OpenAI-Organization': 'org-b' } },
      { id: 'own-pool', provider: 'openai', base_url: base, api_key: 'sk-c', max_connections: 2 },
    ],
    models: [
      { id: 'via-a', type: 'chat', routes: [{ upstream: 'key-a', model: 'm' }] },
      { id: 'via-b', type: 'chat', routes: [{ upstream: 'key-b', model: 'm' }] },
      { id: 'via-c', type: 'chat', routes: [{ upstream: 'own-pool', model: 'm' }] },
    ],
  });
});
afterAll(async () => {
  await test.close();
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

const ask = (model: string) => test.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });

describe('upstream endpoints', () => {
  it('serves credentials to one origin through one connection pool, each request with its own key and headers', async () => {
    seen.length = 0;
    for (const model of ['via-a', 'via-b', 'via-a', 'via-b']) await ask(model);
    expect(seen.map(({ authorization, organization }) => [authorization, organization])).toEqual([
      ['Bearer sk-a', undefined],
      ['Bearer sk-b', 'org-b'],
      ['Bearer sk-a', undefined],
      ['Bearer sk-b', 'org-b'],
    ]);
    // One kept-alive connection carried both credentials' requests.
    expect(new Set(seen.map(({ port }) => port)).size).toBe(1);
  });

  it('gives an entry with other settings (here its pool size) a pool of its own', async () => {
    seen.length = 0;
    await ask('via-a');
    await ask('via-c');
    expect(seen.map(({ authorization }) => authorization)).toEqual(['Bearer sk-a', 'Bearer sk-c']);
    expect(seen[0]?.port).not.toBe(seen[1]?.port);
  });

  it('records the credential the router chose in the request log', async () => {
    const answer = await test.client.chat.completions.create({ model: 'via-b', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const requestId = answer.response.headers.get('x-request-id') as string;
    let row;
    for (let poll = 0; poll < 150 && row === undefined; poll++) {
      [row] = await test.gateway.stores.requestLogs.query({ requestId, limit: 1 });
      if (row === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(row?.upstream).toBe('key-b');
  });
});

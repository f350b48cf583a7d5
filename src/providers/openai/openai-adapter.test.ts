import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamConfig } from '../../config/index.js';
import type { GatewayError } from '../../errors/index.js';
import { OpenAIAdapter } from './openai-adapter.js';

let server: Server;
let answer: unknown;
let adapter: OpenAIAdapter;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  adapter = new OpenAIAdapter({
    id: 'test', provider: 'openai', base_url: `http://127.0.0.1:${port}/v1`, max_connections: 2, max_response_bytes: 1 << 20, max_event_bytes: 1 << 20,
    timeouts: { connect_ms: 1_000, first_byte_ms: 5_000, idle_ms: 5_000 },
  } as UpstreamConfig);
});
afterAll(async () => {
  await adapter.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function embedCode(data: unknown): Promise<string> {
  answer = { object: 'list', data, model: 'm', usage: { prompt_tokens: 1, total_tokens: 1 } };
  try {
    await adapter.embed({ model: 'm', inputs: ['a', 'b'], encodingFormat: 'float', cancellation: new AbortController().signal });
    return 'accepted';
  } catch (error) {
    return (error as GatewayError).code;
  }
}

describe('OpenAIAdapter.embed', () => {
  it('places vectors by index, in any order', async () => {
    answer = { data: [{ index: 1, embedding: [2] }, { index: 0, embedding: [1] }], usage: { prompt_tokens: 3 } };
    const result = await adapter.embed({ model: 'm', inputs: ['a', 'b'], encodingFormat: 'float', cancellation: new AbortController().signal });
    expect(result).toEqual({ vectors: [[1], [2]], promptTokens: 3 });
  });

  it('refuses an answer with a repeated, missing or out-of-range index', async () => {
    expect(await embedCode([{ index: 0, embedding: [1] }, { index: 0, embedding: [2] }])).toBe('upstream_invalid_response');
    expect(await embedCode([{ index: 0, embedding: [1] }])).toBe('upstream_invalid_response');
    expect(await embedCode([{ index: 0, embedding: [1] }, { index: 2, embedding: [2] }])).toBe('upstream_invalid_response');
  });
});

import zlib from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';

/** zstd is in Node's zlib from 22.15 / 23.8 on. */
const zstdCompressSync = (zlib as unknown as { zstdCompressSync?: (data: Buffer) => Buffer }).zstdCompressSync;

const COMPRESSORS: Record<string, (data: Buffer) => Buffer> = {
  gzip: (data) => zlib.gzipSync(data),
  deflate: (data) => zlib.deflateSync(data),
  br: (data) => zlib.brotliCompressSync(data),
};

let harness: OpenAIFakeGateway;
let token: string;
beforeAll(async () => {
  harness = await startOpenAIFakeGateway({ config: { server: { host: '127.0.0.1', port: 0, body_limit_bytes: 1024 * 1024 } } });
  token = await harness.createToken();
});
afterAll(async () => {
  await harness.close();
});

async function post(path: string, body: Buffer, encoding: string) {
  const response = await request(`${harness.gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': encoding },
    body,
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, body: JSON.parse(text) as { error?: { code: string; message: string }; object?: string } };
}

const chat = Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }));
const embeddings = Buffer.from(JSON.stringify({ model: 'text-embedding-3-small', input: 'a cat on a mat' }));

describe('compressed request bodies', () => {
  for (const [encoding, compress] of Object.entries(COMPRESSORS)) {
    it(`decodes ${encoding} on the chat route and on the others`, async () => {
      expect((await post('/v1/chat/completions', compress(chat), encoding)).body.object).toBe('chat.completion');
      expect((await post('/v1/embeddings', compress(embeddings), encoding.toUpperCase())).body.object).toBe('list');
    });
  }

  it(zstdCompressSync === undefined ? 'refuses zstd on a Node without it, listing what it decodes' : 'decodes zstd (Node 22.15+)', async () => {
    if (zstdCompressSync === undefined) {
      const refused = await post('/v1/chat/completions', chat, 'zstd');
      expect(refused.status).toBe(415);
      expect(refused.headers['accept-encoding']).toBe('gzip, deflate, br, identity');
      return;
    }
    expect((await post('/v1/chat/completions', zstdCompressSync(chat), 'zstd')).body.object).toBe('chat.completion');
    expect((await post('/v1/embeddings', zstdCompressSync(embeddings), 'zstd')).body.object).toBe('list');
  });

  it('answers an unknown coding 415 with the codings it decodes in Accept-Encoding', async () => {
    for (const path of ['/v1/chat/completions', '/v1/embeddings']) {
      const refused = await post(path, chat, 'compress');
      expect(refused.status).toBe(415);
      expect(refused.body.error?.code).toBe('unsupported_content_encoding');
      expect(refused.headers['accept-encoding']).toMatch(/^gzip, deflate, br, (zstd, )?identity$/);
    }
  });

  it('caps what a body inflates to, not only what arrived: a gzip bomb is 413', async () => {
    // 64 MB of spaces is a valid JSON prefix and compresses to ~64 KB, well under the 1 MB limit.
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    for (const path of ['/v1/chat/completions', '/v1/embeddings']) {
      const refused = await post(path, bomb, 'gzip');
      expect(refused.status).toBe(413);
      expect(refused.body.error?.code).toBe('payload_too_large');
    }
  });

  it('says a body that is not what its Content-Encoding claims is invalid', async () => {
    for (const path of ['/v1/chat/completions', '/v1/embeddings']) {
      const refused = await post(path, chat, 'gzip');
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'invalid_body', message: 'The request body is not valid gzip data.' });
    }
  });

  it('refuses a compressed multipart upload: audio is compressed already', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(100)]), 'a.mp3');
    form.append('model', 'whisper-1');
    const encoded = new Request('http://x', { method: 'POST', body: form });
    const response = await request(`${harness.gateway.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': encoded.headers.get('content-type') as string, 'content-encoding': 'gzip' },
      body: zlib.gzipSync(Buffer.from(await encoded.arrayBuffer())),
    });
    expect(response.statusCode).toBe(415);
    expect(((await response.body.json()) as { error: { code: string } }).error.code).toBe('unsupported_content_encoding');
  });
});

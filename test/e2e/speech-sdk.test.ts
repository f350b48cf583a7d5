import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { detectAudioFormat } from '../../src/api/audio-format.js';
import { fakeMp3, fakeWav } from '../fake-upstreams/openai-upstream.js';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';

let harness: OpenAIFakeGateway;
let token: string;
let client: OpenAI;

beforeAll(async () => {
  harness = await startOpenAIFakeGateway();
  token = await harness.createToken({ team: 'voice' });
  client = harness.clientFor(token);
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.upstream.options = {};
  harness.upstream.requests.length = 0;
});

async function post(body: unknown): Promise<{ status: number; body: { error?: { code: string }; detail?: unknown } }> {
  const response = await fetch(`${harness.gateway.url}/v1/audio/speech`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  // Audio on success, JSON on error.
  const json = response.headers.get('content-type')?.startsWith('application/json') === true;
  return { status: response.status, body: (json ? await response.json() : (await response.arrayBuffer(), {})) as never };
}

describe('speech through the SDK', () => {
  it('returns MP3 by default, as audio/mpeg, byte for byte', async () => {
    const response = await client.audio.speech.create({ model: 'tts-1', input: 'Hello there.', voice: 'alloy' });
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    // Played as it arrives: a reverse proxy in front must not buffer it (docs/reverse-proxy.md).
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const audio = Buffer.from(await response.arrayBuffer());
    expect(detectAudioFormat(audio)).toBe('mp3');
    expect(audio.equals(fakeMp3())).toBe(true);
    expect(harness.upstream.requests[0]?.body).toEqual({ model: 'gpt-4o-mini-tts', input: 'Hello there.', voice: 'alloy', response_format: 'mp3', speed: 1 });
  });

  it('returns WAV as audio/wav', async () => {
    const response = await client.audio.speech.create({ model: 'tts-1', input: 'Hello there.', voice: 'alloy', response_format: 'wav', speed: 1.5 });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    const audio = Buffer.from(await response.arrayBuffer());
    expect(detectAudioFormat(audio)).toBe('wav');
    expect(audio.equals(fakeWav())).toBe(true);
    expect(harness.upstream.requests[0]?.body).toMatchObject({ response_format: 'wav', speed: 1.5 });
  });

  it('uses the model default voice when the request names none', async () => {
    const response = await post({ model: 'tts-1', input: 'Hi' });
    expect(response.status).toBe(200);
    expect(harness.upstream.requests[0]?.body).toMatchObject({ voice: 'nova' });
  });

  it('passes the other formats through with their content types', async () => {
    for (const [format, type] of [
      ['opus', 'audio/ogg'],
      ['aac', 'audio/aac'],
      ['flac', 'audio/flac'],
      ['pcm', 'audio/pcm'],
    ] as const) {
      const response = await client.audio.speech.create({ model: 'tts-1', input: 'Hi', voice: 'alloy', response_format: format });
      expect(response.headers.get('content-type')).toBe(type);
      expect(Buffer.from(await response.arrayBuffer()).toString()).toBe(`${format} audio`);
    }
  });

  it('streams the audio as it arrives instead of waiting for all of it', async () => {
    harness.upstream.options = { chunkDelayMs: 200 };
    const response = await client.audio.speech.create({ model: 'tts-1', input: 'Hello', voice: 'alloy', response_format: 'wav' });
    const arrivals: number[] = [];
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      arrivals.push(performance.now());
    }
    expect(arrivals.length).toBeGreaterThanOrEqual(4);
    expect((arrivals.at(-1) as number) - (arrivals[0] as number)).toBeGreaterThan(400);
  });

  it('logs the request', async () => {
    const response = await client.audio.speech.create({ model: 'tts-1', input: 'Hi', voice: 'alloy' }).asResponse();
    await response.arrayBuffer();
    const row = await harness.logRow(response.headers.get('x-request-id'));
    expect(row).toMatchObject({ endpoint: 'audio.speech', model: 'tts-1', upstream: 'primary', status: 200 });
  });
});

describe('speech limits and errors', () => {
  it('accepts 4096 characters and refuses 4097, counting an emoji as one character', async () => {
    expect((await post({ model: 'tts-1', input: 'a'.repeat(4096) })).status).toBe(200);
    expect((await post({ model: 'tts-1', input: '🙂'.repeat(4096) })).status).toBe(200);
    harness.upstream.requests.length = 0;
    const refused = await post({ model: 'tts-1', input: 'a'.repeat(4097) });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'input'], type: 'string_too_long' })]);
    expect(harness.upstream.requests).toHaveLength(0);
  });

  it('accepts speed 0.25 and 4.0 and refuses just outside', async () => {
    for (const speed of [0.25, 4]) expect((await post({ model: 'tts-1', input: 'x', speed })).status).toBe(200);
    for (const [speed, type] of [
      [0.24, 'greater_than_equal'],
      [4.01, 'less_than_equal'],
    ] as const) {
      const refused = await post({ model: 'tts-1', input: 'x', speed });
      expect(refused.status).toBe(422);
      expect(refused.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'speed'], type })]);
    }
  });

  const refused: Array<[string, Record<string, unknown>, (string | number)[]]> = [
    ['a missing input', { model: 'tts-1' }, ['body', 'input']],
    ['an empty input', { model: 'tts-1', input: '' }, ['body', 'input']],
    ['an unknown response_format', { model: 'tts-1', input: 'x', response_format: 'ogg' }, ['body', 'response_format']],
    ['a speed that is not a number', { model: 'tts-1', input: 'x', speed: 'fast' }, ['body', 'speed']],
  ];
  for (const [name, body, loc] of refused) {
    it(`refuses ${name} with 422 naming the field`, async () => {
      const answer = await post(body);
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toContainEqual(expect.objectContaining({ loc }));
    });
  }

  it('refuses a chat model with 400 naming its type, and maps an upstream failure before any audio to 502', async () => {
    const wrongType = await post({ model: 'gpt-4o-mini', input: 'x' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error?.code).toBe('model_type_mismatch');
    harness.upstream.failNext({ status: 500 });
    const failed = await post({ model: 'tts-1', input: 'x' });
    expect(failed.status).toBe(502);
    expect(failed.body.error?.code).toBe('upstream_error');
  });
});

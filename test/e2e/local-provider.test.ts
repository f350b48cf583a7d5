import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWavPcm16 } from '../../src/providers/local/audio/wav-file.js';
import { findPocketsphinx } from '../../src/providers/local/transcription/find-pocketsphinx.js';
import { wordErrorRate } from '../support/word-error-rate.js';
import { makeTinyGguf } from '../support/make-tiny-gguf.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * The built-in `local` provider through the whole gateway and the official SDK: real engines,
 * no fakes. Word vectors are converted once into a cache shared with the text engine's suites.
 */
const SHARED_CACHE = join(tmpdir(), 'switchyard-test-glove');
const pocketsphinx = findPocketsphinx();
if (pocketsphinx === null)
  console.warn('local-provider: pocketsphinx is not installed (apt-get install pocketsphinx pocketsphinx-en-us); transcription tests are skipped');

let test: TestGateway;
let modelsDirectory: string;

beforeAll(async () => {
  modelsDirectory = join(tmpdir(), `switchyard-local-models-${process.pid}`);
  mkdirSync(modelsDirectory, { recursive: true });
  await makeTinyGguf(join(modelsDirectory, 'Tiny-Chat.Q0.gguf'), { seed: 7 });
  mkdirSync(SHARED_CACHE, { recursive: true });
  test = await startTestGateway({
    upstreams: [{ id: 'local', provider: 'local', models_dir: modelsDirectory, cache_dir: SHARED_CACHE }],
    models: [],
  });
}, 120_000);

afterAll(async () => {
  await test?.close();
});

const SENTENCES = [
  'the quick brown fox jumps over the lazy dog',
  'please call stella and ask her to bring these things with her from the store',
  'the weather today is sunny with a light breeze from the west',
  'we will meet at the train station at seven in the morning',
  'she opened the window and looked at the garden',
];

describe('the local provider through the gateway', () => {
  it('publishes its models: speech, embeddings, rerank, transcription when pocketsphinx is there, and one chat model per GGUF file', async () => {
    const models = (await test.client.models.list()).data.map((model) => ({
      id: model.id,
      type: (model as unknown as { type: string }).type,
      owned_by: model.owned_by,
    }));
    expect(models).toEqual(
      expect.arrayContaining([
        { id: 'tiny-chat.q0', type: 'chat', owned_by: 'local' },
        { id: 'local-embed', type: 'embedding', owned_by: 'local' },
        { id: 'local-rerank', type: 'rerank', owned_by: 'local' },
        { id: 'local-speech', type: 'speech', owned_by: 'local' },
      ]),
    );
    expect(models.some((model) => model.id === 'local-transcribe')).toBe(pocketsphinx !== null);
  });

  it('speaks mp3 and wav with the right content types, voices that differ, and speed that changes the duration', async () => {
    const input = 'Switchyard speaks without a network.';
    const mp3 = await test.client.audio.speech.create({ model: 'local-speech', input, voice: 'alloy' });
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    const mp3Bytes = new Uint8Array(await mp3.arrayBuffer());
    // An ID3 tag or an MPEG frame sync.
    expect(mp3Bytes[0] === 0x49 || (mp3Bytes[0] === 0xff && ((mp3Bytes[1] ?? 0) & 0xe0) === 0xe0)).toBe(true);

    const wav = async (voice: string, speed: number) => {
      const response = await test.client.audio.speech.create({ model: 'local-speech', input, voice, speed, response_format: 'wav' });
      expect(response.headers.get('content-type')).toBe('audio/wav');
      return decodeWavPcm16(new Uint8Array(await response.arrayBuffer()));
    };
    const normal = await wav('alloy', 1);
    const fast = await wav('alloy', 2);
    const deep = await wav('onyx', 1);
    expect(normal.samples.length).toBeGreaterThan(normal.sampleRate * 0.5);
    expect(fast.samples.length / normal.samples.length).toBeGreaterThan(0.4);
    expect(fast.samples.length / normal.samples.length).toBeLessThan(0.6);
    expect(Buffer.from(deep.samples.buffer).equals(Buffer.from(normal.samples.buffer))).toBe(false);
  });

  it('refuses what the local speech engine cannot do with 400, and an out-of-range speed with 422', async () => {
    await expect(test.client.audio.speech.create({ model: 'local-speech', input: 'hi', voice: 'nobody' })).rejects.toMatchObject({
      status: 400,
      code: 'upstream_bad_request',
    });
    await expect(test.client.audio.speech.create({ model: 'local-speech', input: 'hi', voice: 'alloy', response_format: 'opus' })).rejects.toMatchObject({
      status: 400,
    });
    await expect(test.client.audio.speech.create({ model: 'local-speech', input: 'hi', voice: 'alloy', speed: 4.5 })).rejects.toMatchObject({ status: 422 });
  });

  it('embeds related sentences closer than unrelated ones, in float and base64', async () => {
    const triples = [
      ['The cat sat on the mat.', 'A kitten was sleeping on the rug.', 'The stock market fell sharply today.'],
      ['How do I reset my password?', 'I forgot my login credentials and cannot sign in.', 'What is the best recipe for banana bread?'],
      ['Heavy rain caused flooding in the city.', 'The storm left many streets under water.', 'She bought a new pair of running shoes.'],
    ] as const;
    for (const triple of triples) {
      const response = await test.client.embeddings.create({ model: 'local-embed', input: [...triple], encoding_format: 'float' });
      const [anchor, related, unrelated] = response.data.map((item) => item.embedding) as [number[], number[], number[]];
      expect(anchor).toHaveLength(100);
      expect(cosine(anchor, related)).toBeGreaterThan(cosine(anchor, unrelated));
      expect(response.usage.prompt_tokens).toBeGreaterThan(0);
    }
    const base64 = await new OpenAI({ apiKey: test.token, baseURL: `${test.gateway.url}/v1`, maxRetries: 0 }).embeddings.create({
      model: 'local-embed',
      input: 'hello world',
    });
    expect(base64.data[0]?.embedding).toHaveLength(100);
  });

  it('refuses a dimensions value it cannot produce, and token arrays it cannot read', async () => {
    await expect(test.client.embeddings.create({ model: 'local-embed', input: 'hello', dimensions: 64 })).rejects.toMatchObject({
      status: 400,
      param: 'dimensions',
    });
    await expect(test.client.embeddings.create({ model: 'local-embed', input: [[15339, 1917]] })).rejects.toMatchObject({
      status: 400,
      code: 'upstream_bad_request',
      param: 'input',
    });
  });

  it('reranks the relevant document first, with the original indexes', async () => {
    const documents = [
      'The Eiffel Tower is a landmark in Paris.',
      'Bananas are rich in potassium.',
      'To reset your password, open settings and choose account security.',
      'The football match ended in a draw.',
    ];
    const response = await test.client.post<{ results: Array<{ index: number; relevance_score: number }> }>('/rerank', {
      body: { model: 'local-rerank', query: 'how do I change my password', documents },
    });
    expect(response.results[0]?.index).toBe(2);
    expect(response.results.map((result) => result.index).sort()).toEqual([0, 1, 2, 3]);
    const scores = response.results.map((result) => result.relevance_score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('streams chat tokens from a GGUF model through the SDK, with usage', async () => {
    const stream = await test.client.chat.completions.create({
      model: 'tiny-chat.q0',
      messages: [{ role: 'user', content: 'Say hello.' }],
      max_tokens: 12,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let chunks = 0;
    let finishReason: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
      finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(chunks).toBeGreaterThan(3);
    expect(text.length).toBeGreaterThan(0);
    expect(finishReason).toBe('length');
    expect(usage?.completion_tokens).toBe(12);
    expect(usage?.prompt_tokens).toBeGreaterThan(3);

    const plain = await test.client.chat.completions.create({ model: 'tiny-chat.q0', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 });
    expect(plain.object).toBe('chat.completion');
    expect(plain.usage?.completion_tokens).toBe(4);
  });

  it('refuses chat features a local model does not have', async () => {
    await expect(
      test.client.chat.completions.create({
        model: 'tiny-chat.q0',
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      }),
    ).rejects.toMatchObject({ status: 400 });
  });

  describe.skipIf(pocketsphinx === null)('speech to text', () => {
    it('round trip: speech made by the gateway, transcribed by the gateway, under 30% word error', async () => {
      let errors = 0;
      let words = 0;
      const rates: string[] = [];
      for (const [index, sentence] of SENTENCES.entries()) {
        const format = index % 2 === 0 ? 'wav' : 'mp3';
        const audio = await test.client.audio.speech.create({ model: 'local-speech', input: sentence, voice: 'echo', response_format: format });
        const file = await toFile(new Uint8Array(await audio.arrayBuffer()), `sentence.${format}`);
        const transcription = await test.client.audio.transcriptions.create({ model: 'local-transcribe', file, language: 'en' });
        const count = wordErrorRate(sentence, transcription.text);
        errors += count.errors;
        words += count.referenceWords;
        rates.push(`${format} ${(count.rate * 100).toFixed(0)}% "${transcription.text}"`);
      }
      console.info(`local round trip WER ${((errors / words) * 100).toFixed(1)}% over ${words} words:\n  ${rates.join('\n  ')}`);
      expect(errors / words).toBeLessThan(0.3);
    }, 120_000);

    it('answers verbose_json, srt and vtt, and refuses a language other than English', async () => {
      const audio = await test.client.audio.speech.create({ model: 'local-speech', input: SENTENCES[0] as string, voice: 'echo', response_format: 'wav' });
      const bytes = new Uint8Array(await audio.arrayBuffer());
      const verbose = await test.client.audio.transcriptions.create({
        model: 'local-transcribe',
        file: await toFile(bytes, 'a.wav'),
        response_format: 'verbose_json',
      });
      expect(verbose.duration).toBeGreaterThan(1);
      expect(verbose.segments?.length).toBeGreaterThan(0);
      const srt = await test.client.audio.transcriptions.create({ model: 'local-transcribe', file: await toFile(bytes, 'a.wav'), response_format: 'srt' });
      expect(String(srt)).toMatch(/^1\n00:00:\d\d,\d{3} --> 00:00:\d\d,\d{3}\n/);
      const vtt = await test.client.audio.transcriptions.create({ model: 'local-transcribe', file: await toFile(bytes, 'a.wav'), response_format: 'vtt' });
      expect(String(vtt)).toMatch(/^WEBVTT\n/);
      await expect(
        test.client.audio.transcriptions.create({ model: 'local-transcribe', file: await toFile(bytes, 'a.wav'), language: 'fr' }),
      ).rejects.toMatchObject({ status: 400 });
    }, 60_000);

    it('streams a whole transcript as one delta and a done event, and refuses stream with srt naming stream', async () => {
      const audio = await test.client.audio.speech.create({ model: 'local-speech', input: SENTENCES[0] as string, voice: 'echo', response_format: 'wav' });
      const bytes = new Uint8Array(await audio.arrayBuffer());
      const whole = await test.client.audio.transcriptions.create({ model: 'local-transcribe', file: await toFile(bytes, 'a.wav') });
      const stream = await test.client.audio.transcriptions.create({ model: 'local-transcribe', file: await toFile(bytes, 'a.wav'), stream: true });
      const events: OpenAI.Audio.TranscriptionStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      expect(events.map((event) => event.type)).toEqual(['transcript.text.delta', 'transcript.text.done']);
      expect(events[0]).toMatchObject({ delta: whole.text });
      expect(events[1]).toMatchObject({ text: whole.text });
      await expect(
        test.client.audio.transcriptions.create({ model: 'local-transcribe', file: await toFile(bytes, 'a.wav'), response_format: 'srt', stream: true }),
      ).rejects.toMatchObject({ status: 400, param: 'stream' });
    }, 60_000);

    it('refuses a translation: the local engine has none, and the message says which models can', async () => {
      const audio = await test.client.audio.speech.create({ model: 'local-speech', input: SENTENCES[0] as string, voice: 'echo', response_format: 'wav' });
      const file = await toFile(new Uint8Array(await audio.arrayBuffer()), 'a.wav');
      const refused = await test.client.audio.translations.create({ model: 'local-transcribe', file }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toMatchObject({ status: 400, code: 'model_not_supported', param: 'model' });
      expect((refused as Error).message).toContain('No configured model serves translations');
    }, 60_000);
  });
});

describe('a busy local engine', () => {
  let busy: TestGateway;

  beforeAll(async () => {
    busy = await startTestGateway({
      upstreams: [
        { id: 'local', provider: 'local', models_dir: join(tmpdir(), 'switchyard-no-models'), cache_dir: SHARED_CACHE, engine_threads: 1, engine_queue: 0 },
      ],
      models: [],
    });
  });

  afterAll(async () => {
    await busy?.close();
  });

  it('answers 503 engine_busy with Retry-After when its thread and queue are full, while other traffic still flows', async () => {
    const long = 'This sentence keeps the speech engine busy for a while. '.repeat(40);
    const first = busy.client.audio.speech.create({ model: 'local-speech', input: long, voice: 'alloy', response_format: 'wav' });
    // Give the first request time to reach the engine thread.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await fetch(`${busy.gateway.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${busy.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-speech', input: 'hello', voice: 'alloy' }),
    });
    let firstDone = false;
    void first.then(() => (firstDone = true));
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('engine_busy');
    // The event loop is free: a models listing answers while the speech is still being made.
    await busy.client.models.list();
    expect(firstDone).toBe(false);
    const audio = await first;
    expect((await audio.arrayBuffer()).byteLength).toBeGreaterThan(44);
  }, 60_000);
});

function cosine(left: number[], right: number[]): number {
  let dot = 0;
  let leftNorm = 0;
  let rightNorm = 0;
  left.forEach((value, index) => {
    const other = right[index] ?? 0;
    dot += value * other;
    leftNorm += value * value;
    rightNorm += other * other;
  });
  return dot / Math.sqrt(leftNorm * rightNorm);
}

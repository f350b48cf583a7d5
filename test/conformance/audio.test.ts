import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectAudioFormat } from '../../src/api/audio-format.js';
import { fakeWav } from '../fake-upstreams/openai-upstream.js';
import { providersWith, startConformanceGateway, type ConformanceGateway } from './conformance-providers.js';

for (const provider of providersWith('speech')) {
  describe(`speech conformance: ${provider.name}`, () => {
    let running: ConformanceGateway;
    beforeAll(async () => {
      running = await startConformanceGateway(provider);
    });
    afterAll(async () => {
      await running.close();
    });

    it('answers mp3 as audio/mpeg and wav as audio/wav, with bytes of that format', async () => {
      for (const [format, type] of [
        ['mp3', 'audio/mpeg'],
        ['wav', 'audio/wav'],
      ] as const) {
        const response = await running.client.audio.speech.create({ model: 'speech', input: 'Hello.', voice: 'alloy', response_format: format });
        expect(response.headers.get('content-type')).toBe(type);
        expect(detectAudioFormat(Buffer.from(await response.arrayBuffer()))).toBe(format);
      }
    });
  });
}

for (const provider of providersWith('transcription')) {
  describe(`transcription conformance: ${provider.name}`, () => {
    let running: ConformanceGateway;
    beforeAll(async () => {
      running = await startConformanceGateway(provider);
    });
    afterAll(async () => {
      await running.close();
    });

    it('transcribes a WAV into an object with text', async () => {
      const result = await running.client.audio.transcriptions.create({ model: 'transcription', file: await toFile(fakeWav(), 'hello.wav') });
      expect(typeof result.text).toBe('string');
      expect(result.text.length).toBeGreaterThan(0);
    });
  });
}

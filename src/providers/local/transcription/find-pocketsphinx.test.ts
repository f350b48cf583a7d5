import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPocketsphinx, locatePocketsphinx } from './find-pocketsphinx.js';

let root: string;
let binaryDirectory: string;
let modelDirectory: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'pocketsphinx-layout-'));
  binaryDirectory = join(root, 'bin');
  modelDirectory = join(root, 'model', 'en-us');
  await mkdir(binaryDirectory);
  await mkdir(join(modelDirectory, 'en-us'), { recursive: true });
  await writeFile(join(binaryDirectory, 'pocketsphinx_continuous'), '#!/bin/sh\n');
  await chmod(join(binaryDirectory, 'pocketsphinx_continuous'), 0o755);
  await writeFile(join(modelDirectory, 'en-us', 'mdef'), '');
  await writeFile(join(modelDirectory, 'en-us.lm.bin'), '');
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('locatePocketsphinx', () => {
  it('finds the binary on the search path and the Debian model layout', async () => {
    await writeFile(join(modelDirectory, 'cmudict-en-us.dict'), '');
    expect(locatePocketsphinx(binaryDirectory, [modelDirectory])).toEqual({
      binaryPath: join(binaryDirectory, 'pocketsphinx_continuous'),
      acousticModelDirectory: join(modelDirectory, 'en-us'),
      languageModelPath: join(modelDirectory, 'en-us.lm.bin'),
      dictionaryPath: join(modelDirectory, 'cmudict-en-us.dict'),
    });
  });

  it('reports nothing when the binary or a model file is missing', async () => {
    expect(locatePocketsphinx(join(root, 'elsewhere'), [modelDirectory])).toBeNull();
    await rm(join(modelDirectory, 'cmudict-en-us.dict'), { force: true });
    expect(locatePocketsphinx(binaryDirectory, [modelDirectory])).toBeNull();
  });

  it('answers from its cache on later calls', () => {
    expect(findPocketsphinx()).toBe(findPocketsphinx());
  });
});

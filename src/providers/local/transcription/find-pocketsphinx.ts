import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where the Debian `pocketsphinx` and `pocketsphinx-en-us` packages put the recogniser and its model. */
export interface PocketsphinxInstallation {
  binaryPath: string;
  acousticModelDirectory: string;
  languageModelPath: string;
  dictionaryPath: string;
}

const BINARY_NAME = 'pocketsphinx_continuous';
const MODEL_DIRECTORIES = ['/usr/share/pocketsphinx/model/en-us', '/usr/local/share/pocketsphinx/model/en-us'];

// undefined = not looked yet; null = looked and found nothing. Installing the package while the
// gateway runs needs a restart, which keeps this a plain process-wide cache.
let cachedInstallation: PocketsphinxInstallation | null | undefined;

/** The recogniser binary and its US-English model, or null when either is not installed. */
export function findPocketsphinx(): PocketsphinxInstallation | null {
  if (cachedInstallation === undefined) cachedInstallation = locatePocketsphinx(process.env.PATH ?? '');
  return cachedInstallation;
}

/**
 * The first executable `pocketsphinx_continuous` on `searchPath` (a `PATH`: nothing outside it, so
 * that what the shell would run is what the gateway runs) and the first model directory holding
 * the acoustic model, language model and dictionary.
 */
export function locatePocketsphinx(searchPath: string, modelDirectories: readonly string[] = MODEL_DIRECTORIES): PocketsphinxInstallation | null {
  const candidates = searchPath.split(delimiter).filter((directory) => directory !== '');
  const binaryPath = candidates.map((directory) => join(directory, BINARY_NAME)).find(isExecutableFile);
  if (binaryPath === undefined) return null;
  for (const modelDirectory of modelDirectories) {
    const model = {
      acousticModelDirectory: join(modelDirectory, 'en-us'),
      languageModelPath: join(modelDirectory, 'en-us.lm.bin'),
      dictionaryPath: join(modelDirectory, 'cmudict-en-us.dict'),
    };
    const complete = isFile(join(model.acousticModelDirectory, 'mdef')) && isFile(model.languageModelPath) && isFile(model.dictionaryPath);
    if (complete) return { binaryPath, ...model };
  }
  return null;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isExecutableFile(path: string): boolean {
  if (!isFile(path)) return false;
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

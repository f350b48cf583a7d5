import { readFileSync } from 'node:fs';

let version: string | undefined;

/**
 * This release: the package's version, read from the package.json two folders up, which is the
 * package's own from src/core and from the built dist/core alike. Read, not imported: an import
 * of the manifest would not be in the build.
 */
export function releaseVersion(): string {
  version ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return version;
}

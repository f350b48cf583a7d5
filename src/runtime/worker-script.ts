import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The compiled entry of a worker thread that sits beside the calling module: `relativePath` is
 * its `.js` name, `moduleUrl` the caller's `import.meta.url`. A worker thread needs JavaScript, so
 * when the caller runs from TypeScript sources (the test runner) this points at the same file in
 * `dist/`, which `npm test` builds before running the suites.
 */
export function workerScript(relativePath: string, moduleUrl: string): URL {
  const url = new URL(relativePath, moduleUrl);
  if (!moduleUrl.endsWith('.ts')) return url;
  const compiled = new URL(url.href.replace('/src/', '/dist/'));
  if (!existsSync(fileURLToPath(compiled))) {
    throw new Error(`a worker thread's entry is not built (${fileURLToPath(compiled)} is missing); run npm run build`);
  }
  return compiled;
}

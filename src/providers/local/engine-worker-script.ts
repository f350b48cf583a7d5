import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The engine worker's compiled entry. A worker thread needs JavaScript, so when this module runs
 * from TypeScript sources (the test runner) it points at the build in `dist/`, which `npm test`
 * makes before running the suites.
 */
export function engineWorkerScript(): URL {
  const url = new URL('./engine-worker.js', import.meta.url);
  if (!import.meta.url.endsWith('.ts')) return url;
  const compiled = new URL(url.href.replace('/src/providers/local/', '/dist/providers/local/'));
  if (!existsSync(fileURLToPath(compiled))) {
    throw new Error(`the local engine worker is not built (${fileURLToPath(compiled)} is missing); run npm run build`);
  }
  return compiled;
}

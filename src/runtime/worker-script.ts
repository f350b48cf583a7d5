import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A worker thread's compiled entry, `name` (a `.js` file) beside the module whose `import.meta.url`
 * is `moduleUrl`. A worker needs JavaScript, so when the caller runs from TypeScript sources (the
 * test runner) this points at the build in `dist/`, which `npm test` makes before the suites run.
 */
export function workerScript(moduleUrl: string, name: string): URL {
  const url = new URL(name, moduleUrl);
  if (!moduleUrl.endsWith('.ts')) return url;
  // The project's own `src/` is the last one in the path (a checkout may live under another `src/`).
  const source = url.href.lastIndexOf('/src/');
  const compiled = new URL(`${url.href.slice(0, source)}/dist/${url.href.slice(source + '/src/'.length)}`);
  if (!existsSync(fileURLToPath(compiled))) {
    throw new Error(`the worker ${name} is not built (${fileURLToPath(compiled)} is missing); run npm run build`);
  }
  return compiled;
}

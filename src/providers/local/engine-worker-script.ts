import { workerScript } from '../../runtime/worker-script.js';

/** The engine worker's compiled entry (from `dist/` when running from TypeScript sources). */
export function engineWorkerScript(): URL {
  return workerScript('./engine-worker.js', import.meta.url);
}

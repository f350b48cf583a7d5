import { workerScript } from '../../runtime/worker-script.js';

/** The engine worker's compiled entry (see workerScript). */
export function engineWorkerScript(): URL {
  return workerScript(import.meta.url, './engine-worker.js');
}

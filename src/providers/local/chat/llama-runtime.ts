import { availableParallelism } from 'node:os';
import { getLlama, LlamaLogLevel, type Llama } from 'node-llama-cpp';

/**
 * llama.cpp threads busy-wait, so more threads than free cores makes generation collapse (measured
 * on 2 cores under load: 4 threads took 33 s for what 1 thread did in 60 ms). Leave one core for
 * the gateway's event loop.
 */
export function defaultLlamaThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

interface SharedRuntime {
  llama: Promise<Llama>;
  users: number;
}

// One native runtime per thread budget, shared by every engine in this thread (worker) and
// disposed when the last engine using it closes, so a worker can exit cleanly.
const runtimes = new Map<number, SharedRuntime>();

/**
 * The llama.cpp runtime, set up so it never reaches the network: only prebuilt CPU binaries
 * (`@node-llama-cpp/linux-x64` and friends), never a download or a source build, no GPU probing.
 */
export async function acquireLlama(threads: number): Promise<Llama> {
  let runtime = runtimes.get(threads);
  if (runtime === undefined) {
    const created: SharedRuntime = {
      llama: getLlama({
        gpu: false,
        build: 'never',
        skipDownload: true,
        usePrebuiltBinaries: true,
        progressLogs: false,
        logLevel: LlamaLogLevel.error,
        maxThreads: threads,
      }),
      users: 0,
    };
    runtime = created;
    runtimes.set(threads, created);
    created.llama.catch(() => {
      // A failed start is not cached: the next engine tries again.
      if (runtimes.get(threads) === created) runtimes.delete(threads);
    });
  }
  runtime.users += 1;
  try {
    return await runtime.llama;
  } catch (error) {
    runtime.users -= 1;
    throw error;
  }
}

export async function releaseLlama(threads: number): Promise<void> {
  const runtime = runtimes.get(threads);
  if (runtime === undefined) return;
  runtime.users -= 1;
  if (runtime.users > 0) return;
  runtimes.delete(threads);
  const llama = await runtime.llama;
  await llama.dispose();
}

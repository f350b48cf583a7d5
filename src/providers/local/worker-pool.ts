import { Worker, type TransferListItem } from 'node:worker_threads';
import { GatewayError } from '../../errors/index.js';
import { JobLimiter } from './job-limiter.js';
import { LocalEngineError, type LocalEngineErrorKind } from './local-engine-error.js';
import type { EngineReply, EngineRequest } from './engine-protocol.js';

export interface WorkerPoolOptions {
  /** The worker's JavaScript entry. */
  script: URL;
  /** Passed to every worker as `workerData`. */
  workerData: unknown;
  threads: number;
  maxQueue: number;
  engineName: string;
}

interface PendingCall {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface PooledWorker {
  worker: Worker;
  /** The call it is running, if any: a worker runs one call at a time. */
  current: { id: number; call: PendingCall } | null;
}

/**
 * Worker threads that run a local engine off the event loop. Each thread runs one call at a
 * time; the JobLimiter bounds how many wait, so a busy engine refuses quickly (503 engine_busy)
 * rather than queueing without end. A thread that dies fails its call and is replaced.
 */
export class WorkerPool {
  private readonly limiter: JobLimiter;
  private readonly idle: PooledWorker[] = [];
  private readonly all = new Set<PooledWorker>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: WorkerPoolOptions) {
    this.limiter = new JobLimiter({ concurrency: options.threads, maxQueue: options.maxQueue, engineName: options.engineName });
    for (let index = 0; index < options.threads; index++) this.idle.push(this.spawn());
  }

  /** Runs `method` on a free thread. Aborting `signal` drops a queued call, or asks the running thread to stop. */
  call<T>(method: string, params: unknown, signal?: AbortSignal, transfer: readonly TransferListItem[] = []): Promise<T> {
    return this.limiter.run(() => this.dispatch<T>(method, params, signal, transfer), signal);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.all].map((pooled) => pooled.worker.terminate()));
    this.all.clear();
    this.idle.length = 0;
  }

  private dispatch<T>(method: string, params: unknown, signal: AbortSignal | undefined, transfer: readonly TransferListItem[]): Promise<T> {
    if (this.closed) return Promise.reject(new GatewayError('shutting_down', `The ${this.options.engineName} engine has stopped.`));
    // The limiter lets a call through only when a thread is free.
    const pooled = this.idle.pop() as PooledWorker;
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => pooled.worker.postMessage({ cancel: id } satisfies EngineRequest);
      signal?.addEventListener('abort', onAbort, { once: true });
      const finish = () => {
        signal?.removeEventListener('abort', onAbort);
        pooled.current = null;
        if (!this.closed && this.all.has(pooled)) this.idle.push(pooled);
      };
      pooled.current = {
        id,
        call: {
          resolve: (value) => {
            finish();
            resolve(value as T);
          },
          reject: (error) => {
            finish();
            reject(error);
          },
        },
      };
      pooled.worker.postMessage({ id, method, params } satisfies EngineRequest, transfer);
    });
  }

  private spawn(): PooledWorker {
    const worker = new Worker(this.options.script, { workerData: this.options.workerData, name: this.options.engineName });
    // Idle engine threads must not keep a process alive that has nothing else to do.
    worker.unref();
    const pooled: PooledWorker = { worker, current: null };
    this.all.add(pooled);
    worker.on('message', (reply: EngineReply) => {
      const current = pooled.current;
      if (current === null || current.id !== reply.id) return;
      if (reply.ok) current.call.resolve(reply.result);
      else current.call.reject(toGatewayError(reply.error.kind, reply.error.message, this.options.engineName, reply.error.detail));
    });
    worker.on('error', (error) => this.replace(pooled, error));
    worker.on('exit', (code) => this.replace(pooled, new Error(`worker exited with code ${code}`)));
    return pooled;
  }

  private replace(pooled: PooledWorker, cause: unknown): void {
    if (!this.all.delete(pooled)) return;
    const index = this.idle.indexOf(pooled);
    if (index >= 0) this.idle.splice(index, 1);
    pooled.current?.call.reject(new GatewayError('upstream_error', `The ${this.options.engineName} engine failed.`, { cause }));
    if (!this.closed) this.idle.push(this.spawn());
  }
}

/** `detail` (a stack from the engine thread) is kept as the cause, which is logged and never sent. */
export function toGatewayError(kind: LocalEngineErrorKind, message: string, engineName: string, detail?: string): GatewayError {
  const cause = new LocalEngineError(kind, detail ?? message);
  return kind === 'invalid_request'
    ? new GatewayError('upstream_bad_request', message, { cause })
    : new GatewayError('upstream_error', `The ${engineName} engine failed: ${message}`, { cause });
}

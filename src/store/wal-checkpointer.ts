import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';
import { workerScript } from '../runtime/worker-script.js';
import type { CheckpointReport, CheckpointWorkerData } from './wal-checkpoint-worker.js';

/** SQLite's default: a checkpoint once the WAL holds 1000 pages. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

export interface WalCheckpointerOptions {
  intervalMs: number;
  /** The worker failed; automatic checkpoints are back on the gateway's connection. */
  onFailure: (error: unknown) => void;
  /** The worker's entry; tests replace it. */
  script?: URL;
}

/**
 * Checkpoints the SQLite write-ahead log from a worker thread. SQLite's automatic checkpoint runs
 * inside whichever commit crosses 1000 pages, on the thread that commits: for the gateway that is
 * the event loop, and its fsync measured 5–11 ms on our VMs, once every ~5,000 request-log rows,
 * every request in flight waiting it out. So the gateway's connection turns automatic checkpoints
 * off and this worker runs them on a connection of its own. Should the worker fail, automatic
 * checkpoints are switched back on, so the WAL never grows without bound.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private failed = false;
  private closed = false;
  private reports = 0;
  private last: CheckpointReport | null = null;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly sqlite: SqliteDatabase.Database,
    file: string,
    options: WalCheckpointerOptions,
  ) {
    sqlite.pragma('wal_autocheckpoint = 0');
    const workerData: CheckpointWorkerData = { file, intervalMs: options.intervalMs };
    this.worker = new Worker(options.script ?? workerScript('./wal-checkpoint-worker.js', import.meta.url), {
      workerData,
      name: 'wal-checkpoint',
      // It needs no flags, and some of the gateway's (`--input-type`, loaders) would break it.
      execArgv: [],
    });
    this.worker.on('message', (report: CheckpointReport) => {
      this.reports++;
      this.last = report;
      for (const waiter of this.waiters) waiter();
    });
    const fail = (error: unknown): void => {
      if (this.closed || this.failed) return;
      this.failed = true;
      this.restoreAutomaticCheckpoints();
      options.onFailure(error);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the WAL checkpoint worker exited with code ${code}`)));
    // It only waits on timers and disk: it must not keep a process alive that is otherwise done.
    // After the listeners: adding a `message` listener refs the worker's port again.
    this.worker.unref();
  }

  /** Checkpoints reported so far, and the latest. */
  get status(): { reports: number; last: CheckpointReport | null; failed: boolean } {
    return { reports: this.reports, last: this.last, failed: this.failed };
  }

  /** Resolves after the next checkpoint the worker reports (for tests and diagnostics). */
  nextReport(): Promise<CheckpointReport> {
    return new Promise((resolve) => {
      const waiter = (): void => {
        this.waiters.delete(waiter);
        resolve(this.last as CheckpointReport);
      };
      this.waiters.add(waiter);
    });
  }

  /** Stops the worker; the gateway's connection checkpoints as it closes, as SQLite always does. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.failed) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage('close');
    const timer = setTimeout(() => void this.worker.terminate(), 5_000);
    await exited;
    clearTimeout(timer);
    this.restoreAutomaticCheckpoints();
  }

  private restoreAutomaticCheckpoints(): void {
    if (this.sqlite.open) this.sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  }
}

import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';

/** What the gateway's thread sends: its database file and how often to checkpoint. */
export interface CheckpointWorkerData {
  file: string;
  intervalMs: number;
}

/** What this thread reports after each checkpoint (SQLite's own figures, in WAL frames). */
export interface CheckpointReport {
  /** 1 when a reader or writer kept the checkpoint from completing; it is retried next time. */
  busy: number;
  /** Frames in the WAL. */
  logFrames: number;
  /** Frames copied into the database file so far. */
  checkpointedFrames: number;
}

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

// Its own connection: a PASSIVE checkpoint copies WAL frames into the database file and fsyncs
// it while the gateway's connection keeps writing, and never waits for a lock.
const { file, intervalMs } = workerData as CheckpointWorkerData;
const port = parentPort;
if (port === null) throw new Error('the WAL checkpoint worker runs only as a worker thread');
const database = new SqliteDatabase(file, { fileMustExist: true });

const timer = setInterval(() => {
  const [row] = database.pragma('wal_checkpoint(PASSIVE)') as CheckpointRow[];
  if (row !== undefined) port.postMessage({ busy: row.busy, logFrames: row.log, checkpointedFrames: row.checkpointed } satisfies CheckpointReport);
}, intervalMs);

port.on('message', (message: unknown) => {
  if (message !== 'close') return;
  clearInterval(timer);
  database.close();
  port.close();
});

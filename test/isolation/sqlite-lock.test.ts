import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { startFaultUpstream, type FaultUpstream } from '../fake-upstreams/fault-upstream.js';
import { holdSqliteLock, startStoreGateway } from './support/store-gateway.js';

// Another process holding the SQLite write lock (the CLI in a long transaction, a backup, VACUUM)
// must not reach the event loop: requests and /health are answered as usual, and the request log's
// rows are written once the lock is released. The lock is held 20 s, as in the probe that found
// the stall (a blocked write waited the 5 s busy timeout on the event loop, again and again).
const HOLD_MS = 20_000;

let upstream: FaultUpstream;
let directory: string;
beforeAll(async () => {
  upstream = await startFaultUpstream();
  directory = mkdtempSync(join(tmpdir(), 'switchyard-sqlite-lock-'));
});
afterAll(async () => {
  await upstream?.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('a SQLite database locked by another process', () => {
  it('keeps /health and requests fast while the lock is held (a token new to it included), and writes every row after it is released', async () => {
    const file = join(directory, 'switchyard.db');
    const gateway = await startStoreGateway(`sqlite:${file}`, upstream.url);
    onTestFinished(() => gateway.close());
    expect((await gateway.chat()).status).toBe(200);
    // Made by another process just before the lock: the gateway first meets it under the lock, and
    // reads the tokens table again then (a read, which WAL lets through a writer's lock).
    const newToken = await gateway.createToken();

    const lock = await holdSqliteLock(file, HOLD_MS);
    const ids: string[] = [];
    const chatMs: number[] = [];
    const healthMs: number[] = [];
    let locked = true;
    void lock.released.then(() => {
      locked = false;
    });
    const traffic = (async () => {
      while (locked) {
        const answer = await gateway.chat('ok', ids.length % 2 === 0 ? newToken : gateway.token);
        expect(answer.status).toBe(200);
        ids.push(answer.id);
        chatMs.push(answer.ms);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    const probes = (async () => {
      while (locked) {
        healthMs.push(await gateway.health());
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await Promise.all([lock.released, traffic, probes]);

    // A /health round trip bounds the event loop's lag from above (it is answered on the loop):
    // 99 in 100 under 50 ms, and none over 100 ms on a shared two-core machine, where a write
    // waiting on the lock stalled it for 5 s.
    const sorted = [...healthMs].sort((left, right) => left - right);
    expect(sorted[Math.floor(sorted.length * 0.99)]).toBeLessThan(50);
    expect(Math.max(...healthMs)).toBeLessThan(100);
    expect(Math.max(...chatMs)).toBeLessThan(250);
    expect(ids.length).toBeGreaterThan(50);

    const reader = new SqliteDatabase(file, { readonly: true });
    onTestFinished(() => {
      reader.close();
    });
    const logged = reader.prepare('select count(*) from request_logs where id = ?').pluck();
    await vi.waitFor(() => expect(ids.filter((id) => logged.get(id) === 0)).toEqual([]), { timeout: 5_000, interval: 100 });
    expect(await gateway.stop()).toBe(0);
  }, 60_000);
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectBenchRedis, removeBenchKeys } from './bench-redis.js';
import { median, openLoop, openLoopPool } from './load.js';
import { cpuSeconds } from './process-stats.js';
import { launchSwitchyard, plainChatConfig, spawnPinned, startBareProxy, type BenchContext, type Target } from './targets.js';

/**
 * `serve --workers` against one process (issue 34): the gateway's CPU per request, its primary and
 * workers together, at one open-loop rate that neither saturates, with 1 and with 2 workers, and
 * the bare undici proxy (the floor) in the same rounds. Every process may use both cores (a
 * 2-core machine cannot keep the load generator off two workers' cores), so the figure compared is
 * CPU per request, not throughput. Both use Redis state (more than one worker needs it).
 *
 *   node dist-bench/workers-bench.js [--rate 600] [--seconds 8] [--rounds 3] [--database postgres://…]
 *
 * The request log goes to SQLite (one file the workers share) unless `--database` names another.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const EVERY_CORE = ['taskset', '-c', '0,1', 'node'];

function text(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
}

async function measure(target: Target, rate: number, seconds: number): Promise<{ cpuMicroseconds: number; failed: number }> {
  const pool = openLoopPool(target);
  try {
    await openLoop(target, rate, 2, pool);
    const before = cpuSeconds(target.pid);
    const result = await openLoop(target, rate, seconds, pool);
    const used = cpuSeconds(target.pid) - before;
    return { cpuMicroseconds: (used * 1e6) / Math.max(1, result.completed), failed: result.failed };
  } finally {
    await pool.close();
  }
}

async function main(): Promise<void> {
  const rate = argument('--rate', 600);
  const seconds = argument('--seconds', 8);
  const rounds = argument('--rounds', 3);
  const database = text('--database');
  const { redis, skipped } = await connectBenchRedis('switchyard-bench-workers');
  if (redis === null) throw new Error(`the workers bench needs Redis: ${skipped}`);
  const workDirectory = mkdtempSync(join(tmpdir(), 'switchyard-bench-workers-'));
  const upstream = await spawnPinned('node', [join(ROOT, 'dist-bench', 'fast-upstream.js'), '0'], { core: '0,1' });
  const context: BenchContext = {
    root: ROOT,
    workDirectory,
    upstreamOrigin: `http://127.0.0.1:${String(upstream.first['port'])}`,
    upstreamPid: upstream.child.pid as number,
  };
  const figures: Record<string, number[]> = { floor: [], '1 worker': [], '2 workers': [] };
  let failures = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      const floor = await startBareProxy(context, EVERY_CORE);
      try {
        const { cpuMicroseconds, failed } = await measure(floor, rate, seconds);
        figures['floor']?.push(cpuMicroseconds);
        failures += failed;
      } finally {
        await floor.stop();
      }
      for (const workers of [1, 2]) {
        const name = workers === 1 ? '1 worker' : '2 workers';
        const config = plainChatConfig(context, join(workDirectory, 'switchyard'), {
          topLevel: [
            `state: { url: "${redis.url}", key_prefix: "${redis.keyPrefix}${round}-${workers}:" }`,
            `server: { host: 127.0.0.1, port: 0, workers: ${workers} }`,
          ],
        })
          .replace('server: { host: 127.0.0.1, port: 0 }\n', '')
          .replace(/^database: .*$/m, (line) => (database === undefined ? line : `database: { url: "${database}" }`));
        const target = await launchSwitchyard(context, { root: ROOT, name: 'switchyard', label: name }, config, [], undefined, EVERY_CORE);
        try {
          const { cpuMicroseconds, failed } = await measure(target, rate, seconds);
          figures[name]?.push(cpuMicroseconds);
          failures += failed;
        } finally {
          await target.stop();
        }
        rmSync(join(workDirectory, 'switchyard'), { recursive: true, force: true });
      }
      process.stderr.write(
        `round ${round + 1}: ${Object.entries(figures)
          .map(([name, values]) => `${name} ${Math.round(values.at(-1) ?? 0)} µs`)
          .join(', ')}\n`,
      );
    }
  } finally {
    upstream.child.kill('SIGTERM');
    await removeBenchKeys(redis, 'workers');
    redis.client.disconnect();
    rmSync(workDirectory, { recursive: true, force: true });
  }
  const floor = median(figures['floor'] as number[]);
  const one = median(figures['1 worker'] as number[]);
  const two = median(figures['2 workers'] as number[]);
  process.stdout.write(
    [
      `| ${rate} requests a second, ${rounds} rounds of ${seconds} s, medians | CPU µs / request | ÷ floor |`,
      '|---|---:|---:|',
      `| floor (bare undici proxy) | ${floor.toFixed(0)} | 1.00× |`,
      `| 1 worker (one process) | ${one.toFixed(0)} | ${(one / floor).toFixed(2)}× |`,
      `| 2 workers (primary + workers) | ${two.toFixed(0)} | ${(two / floor).toFixed(2)}× |`,
      '',
      `2 workers ÷ 1 worker: ${(two / one).toFixed(3)}; failed requests: ${failures}`,
      '',
    ].join('\n'),
  );
}

await main();

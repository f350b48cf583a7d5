import { Redis } from 'ioredis';
import { firstLine } from './bench-setup.js';

/**
 * The Redis that scenarios' Redis-state targets (`pool-redis`, `limits-redis`) share, each under a
 * key prefix of its own, so that no state of an earlier run (or of the tests sharing this Redis)
 * is read and each scenario's keys can be removed afterwards.
 */
export interface BenchRedis {
  url: string;
  keyPrefix: string;
  /** The bench's own connection: reads Redis's CPU time and removes the run's keys at the end. */
  client: Redis;
}

const REDIS_CONNECT_TIMEOUT_MS = 1_000;

/** The tests' Redis when set, else the usual local one. */
export function benchRedisUrl(): string {
  return process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
}

/** A connection with a fresh prefix `<stem>-<time>-<pid>:`, or, when Redis does not answer, why (for the report's remarks). */
export async function connectBenchRedis(stem: string): Promise<{ redis: BenchRedis; skipped: null } | { redis: null; skipped: string }> {
  const url = benchRedisUrl();
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // Kept to say why Redis was skipped (connect() itself only says the connection closed); ioredis
  // would print it otherwise.
  let lastError: unknown = null;
  client.on('error', (error: unknown) => {
    lastError = error;
  });
  try {
    await client.connect();
    await client.ping();
    return { redis: { url, keyPrefix: `${stem}-${Date.now().toString(36)}-${process.pid}:`, client }, skipped: null };
  } catch (error) {
    client.disconnect();
    return { redis: null, skipped: `Redis at ${hidePassword(url)} did not answer (${firstLine(lastError ?? error)})` };
  }
}

/** Redis's own CPU time (all its threads), from INFO: not the gateway's, but part of what a request costs. */
export async function redisCpuSeconds(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/**
 * Commands Redis has processed so far, from every client (INFO stats): over a window, divided by the
 * requests, it tells how many commands a request sent, or that other clients shared this Redis
 * (whose CPU is then counted with the bench's).
 */
export async function redisCommandsProcessed(client: Redis): Promise<number> {
  const info = await client.info('stats');
  return Number(/^total_commands_processed:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

/** The report's remark on a scenario's Redis: where, which prefix, and why its CPU is a row of its own. */
export function describeRedis(redis: BenchRedis): string {
  return `Redis state: ${hidePassword(redis.url)}, key prefix \`${redis.keyPrefix}\` (removed after the run); Redis is not pinned to a core (it may share the server core with the gateway and the upstream, or the load generator's), and its CPU is not in the gateway's but in its own row`;
}

/**
 * Removes a scenario's keys and closes the bench's connection (which would keep the process
 * alive). Call once the gateways using it are stopped, so that none writes its counts back.
 */
export async function removeBenchKeys(redis: BenchRedis | null, scenario: string): Promise<string> {
  if (redis === null) return `${scenario}: no Redis keys to remove`;
  try {
    let removed = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.client.scan(cursor, 'MATCH', `${redis.keyPrefix}*`, 'COUNT', 1_000);
      cursor = next;
      if (keys.length > 0) removed += await redis.client.unlink(...keys);
    } while (cursor !== '0');
    return `${scenario}: removed ${removed} Redis keys under ${redis.keyPrefix}`;
  } catch (error) {
    return `${scenario}: the run's Redis keys (${redis.keyPrefix}*) could not be removed: ${firstLine(error)}`;
  } finally {
    redis.client.disconnect();
  }
}

function hidePassword(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

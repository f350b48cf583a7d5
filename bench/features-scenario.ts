import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { connectBenchRedis, describeRedis, redisCommandsProcessed, redisCpuSeconds, removeBenchKeys, type BenchRedis } from './bench-redis.js';
import { assertLimited, describeLimitedToken, LIMITED_TOKEN, PRICE } from './limits-scenario.js';
import { describePoolAndTraffic, poolConfig } from './pool-scenario.js';
import { SessionMix } from './session-mix.js';
import { launchSwitchyard, type BenchContext, type Target } from './targets.js';

/**
 * The every-feature scenario (issue 32), what a platform team runs: the pool scenario's chat model
 * over four weighted credentials and its traffic (half the requests with `X-Session-Id`, session
 * inference on), Redis state, both models priced, and the limits scenario's token, whose token,
 * project and team each carry every rate limit and quota, none ever reached. Its CPU per request
 * is the gateway's plus the Redis server's (`stateCpuSeconds`): with Redis state, that is where
 * the limits, slots and session bindings are kept. Without Redis it cannot be built, and is left
 * out with a note.
 */
export interface FeaturesSetup {
  redis: BenchRedis | null;
  notes: string[];
}

const NAME = 'features';
// A request waits 150 ms for a state operation by default, then goes on without it, and five such in
// a row open the breaker. On a loaded 2-core host (load average 8) two of a guard run's rounds read
// 25 and 74 Redis commands a request against ~160 in the others: by all signs their requests went on
// without Redis, measuring fewer features than the scenario's. A longer wait keeps every request's
// state work in the figure; the guard still counts, from `/health`, what was skipped.
export const REQUEST_TIMEOUT_MS = 5_000;
export const FEATURES_LABEL = 'Switchyard, every feature on';

/** Checks Redis and picks the scenario's own key prefix; a Redis that does not answer leaves the scenario out, with why. */
export async function prepareFeatures(): Promise<FeaturesSetup> {
  const { redis, skipped } = await connectBenchRedis('switchyard-bench-features');
  return { redis, notes: skipped === null ? [] : [`every feature on: skipped, ${skipped}`] };
}

/**
 * The target, with its limits checked in force (it is stopped and the error thrown otherwise: the
 * scenario must not be measured half-built). A fresh database at every start (the memory test
 * restarts it): the CLI creates a team or project once only, and the quotas then start from an
 * empty request log.
 */
export async function startFeaturesTarget(context: BenchContext, setup: FeaturesSetup): Promise<Target> {
  const redis = setup.redis;
  if (redis === null) throw new Error('every feature on: needs Redis (prepareFeatures found none)');
  const directory = join(context.workDirectory, NAME);
  rmSync(directory, { recursive: true, force: true });
  const config = poolConfig(context, directory, { strategy: true, inferSessions: true, redis, modelLines: [PRICE], requestTimeoutMs: REQUEST_TIMEOUT_MS });
  const target = await launchSwitchyard(context, { root: context.root, name: NAME, label: FEATURES_LABEL }, config, [], LIMITED_TOKEN);
  target.stateCpuSeconds = () => redisCpuSeconds(redis.client);
  target.stateCommands = () => redisCommandsProcessed(redis.client);
  target.stateSkipped = () => skippedStateOperations(target.origin);
  try {
    await assertLimited(target);
  } catch (error) {
    await target.stop();
    throw error;
  }
  // After the check, whose request carries no session id: the mix starts at its first request.
  target.sessions = new SessionMix();
  return target;
}

/** The state operations a gateway went on without so far, from `/health`'s `shared_state` (timeouts and refusals by its breaker). */
export async function skippedStateOperations(origin: string): Promise<number> {
  const response = await request(`${origin}/health`);
  const health = (await response.body.json()) as { shared_state?: { timeouts?: number; refused?: number } };
  const shared = health.shared_state;
  if (shared === undefined) throw new Error(`${origin}/health has no shared_state: is the state Redis?`);
  return (shared.timeouts ?? 0) + (shared.refused ?? 0);
}

/** What the report says about the scenario: how it was built, and what was skipped. */
export function describeFeatures(setup: FeaturesSetup): string[] {
  return [
    `Built: ${describePoolAndTraffic()}; both models priced (${PRICE.trim()}); ${describeLimitedToken()}; \`state.request_timeout_ms: ${REQUEST_TIMEOUT_MS}\` (the default 150 ms let a loaded host's requests go on without Redis)`,
    ...(setup.redis === null ? [] : [describeRedis(setup.redis)]),
    ...setup.notes,
  ];
}

/** Removes the scenario's keys from Redis and closes the connection (call once its gateway is stopped); says what it did. */
export function cleanupFeatures(setup: FeaturesSetup): Promise<string> {
  return removeBenchKeys(setup.redis, 'every-feature scenario');
}

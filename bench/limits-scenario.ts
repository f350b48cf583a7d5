import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { connectBenchRedis, describeRedis, redisCpuSeconds, removeBenchKeys, type BenchRedis } from './bench-redis.js';
import { chatBody } from './load.js';
import { CHAT_PATH, launchSwitchyard, plainChatConfig, type BenchContext, type LimitsTargetName, type Target, type TokenSetup } from './targets.js';

/**
 * The limits scenario (issue 19): the plain chat scenario (`switchyard`: same config, route and
 * fake upstream), with a token whose token, project and team each carry every rate limit and
 * quota, all too high ever to trigger, and both models priced, so that every request is admitted
 * by one `charge` of all 24 meters and settled with its tokens and dollars, and nothing else
 * differs. Targets, taking turns with the others:
 * - `limits`: memory state (the issue's bound: within 10 % of the build before it);
 * - `limits-redis`: Redis state, one script round trip per admission (skipped when Redis does
 *   not answer).
 * The `--baseline` build predates limits: its plain `baseline` target is what these compare with.
 */
const NEVER = '1000000000';
const LIMIT_FLAGS = ['--rpm', '--tpm', '--max-concurrent', '--tokens-per-day', '--tokens-per-month', '--tokens-total', '--usd-per-day', '--usd-per-month'];
const EVERY_LIMIT = LIMIT_FLAGS.flatMap((flag) => [flag, NEVER]);
const TEAM = 'bench';
const PROJECT = 'bench-project';
/** The team and project with their limits (the CLI refuses to make a project's team for it), then the token in both with its own. */
export const LIMITED_TOKEN: TokenSetup = {
  before: [
    ['teams', 'create', TEAM, ...EVERY_LIMIT],
    ['projects', 'create', PROJECT, '--team', TEAM, ...EVERY_LIMIT],
  ],
  tokenArguments: ['--team', TEAM, '--project', PROJECT, ...EVERY_LIMIT],
};
// gpt-4o-mini's list price: any price makes the dollar quotas count.
export const PRICE = '    price: { input_per_mtok: 0.15, output_per_mtok: 0.6 }';
/** What tells that a response went through the limits: sent only for a holder with an `rpm` or `tpm` limit. */
const LIMITS_HEADER = 'x-ratelimit-limit-requests';

export interface LimitsSetup {
  redis: BenchRedis | null;
  notes: string[];
  /** `limits-redis`'s `state.request_timeout_ms`; the gateway's default when unset (the feature ladder sets the every-feature scenario's). */
  stateRequestTimeoutMs?: number;
}

/** Checks Redis and picks the scenario's own key prefix; a Redis that does not answer skips `limits-redis` with a note. */
export async function prepareLimits(): Promise<LimitsSetup> {
  const { redis, skipped } = await connectBenchRedis('switchyard-bench-limits');
  return { redis, notes: skipped === null ? [] : [`\`limits-redis\`: skipped, ${skipped}`] };
}

export function limitsTargetNames(setup: LimitsSetup): LimitsTargetName[] {
  return ['limits', ...(setup.redis === null ? [] : ['limits-redis' as const])];
}

/** Every limits target started; on a failure, those that did start are stopped and it is thrown (the scenario must not be measured half-built). */
export async function startLimitsTargets(context: BenchContext, setup: LimitsSetup): Promise<Target[]> {
  const results = await Promise.allSettled(limitsTargetNames(setup).map((name) => startLimitsTarget(context, name, setup)));
  const started = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = results.find((result) => result.status === 'rejected');
  if (failure?.status === 'rejected') {
    await Promise.all(started.map((target) => target.stop()));
    throw failure.reason;
  }
  return started;
}

export async function startLimitsTarget(context: BenchContext, name: LimitsTargetName, setup: LimitsSetup): Promise<Target> {
  const directory = join(context.workDirectory, name);
  // A fresh database at every start (the memory test restarts the target): the CLI creates a
  // team or project once only, and the quotas then start from an empty request log.
  rmSync(directory, { recursive: true, force: true });
  const redis = name === 'limits-redis' ? (setup.redis as BenchRedis) : null;
  const timeout = setup.stateRequestTimeoutMs === undefined ? '' : `, request_timeout_ms: ${setup.stateRequestTimeoutMs}`;
  const state = redis === null ? [] : [`state: { url: "${redis.url}", key_prefix: "${redis.keyPrefix}"${timeout} }`];
  const config = plainChatConfig(context, directory, { topLevel: state, modelLines: [PRICE] });
  const label = `Switchyard, limits, ${redis === null ? 'memory' : 'Redis'}`;
  const target = await launchSwitchyard(context, { root: context.root, name, label }, config, [], LIMITED_TOKEN);
  if (redis !== null) target.stateCpuSeconds = () => redisCpuSeconds(redis.client);
  try {
    await assertLimited(target);
  } catch (error) {
    await target.stop();
    throw error;
  }
  return target;
}

/** One request of the limited token: unless its answer carries the limits' headers, the scenario would measure nothing of them. */
export async function assertLimited(target: Target): Promise<void> {
  const response = await request(`${target.origin}${CHAT_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: chatBody(false),
  });
  await response.body.dump();
  const limit = response.headers[LIMITS_HEADER];
  if (response.statusCode !== 200 || limit === undefined) {
    throw new Error(
      `${target.label} answered ${response.statusCode} ${limit === undefined ? `without ${LIMITS_HEADER}` : `with ${LIMITS_HEADER}: ${String(limit)}`}; the token's limits are not in force, so the scenario would not measure them`,
    );
  }
}

/** What the report says about the scenario: how it was built, and what was skipped. */
export function describeLimits(setup: LimitsSetup): string[] {
  return [
    `Built: the plain chat config (the \`Switchyard\` column's) with both models priced (${PRICE.trim()}), and ${describeLimitedToken()}`,
    ...(setup.redis === null ? [] : [describeRedis(setup.redis)]),
    ...setup.notes,
  ];
}

/** The limited token, its project and team, for a scenario's remarks. */
export function describeLimitedToken(): string {
  return `a token of project \`${PROJECT}\` of team \`${TEAM}\`; the token, the project and the team each have every limit (${LIMIT_FLAGS.join(', ')}), all ${Number(NEVER).toLocaleString('en-US')}: never reached, yet every request is admitted by one \`charge\` of them all and settled with its tokens and cost; each start checked that an answer carries \`${LIMITS_HEADER}\``;
}

/** Removes the scenario's keys from Redis (call once the gateways using it are stopped); says what it did. */
export function cleanupLimits(setup: LimitsSetup): Promise<string> {
  return removeBenchKeys(setup.redis, 'limits scenario');
}

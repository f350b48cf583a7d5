import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import type { ChatProvider } from '../providers/provider-adapter.js';
import type { CatalogModel, Route } from './model-catalog.js';
import { failureOf, Router, type AttemptObserver } from './router.js';

const provider = {} as ChatProvider;

function model(weights: number[]): CatalogModel<'chat'> {
  const routes: Route<'chat'>[] = weights.map((weight, index) => ({ credential: { id: `u${index}`, apiKey: undefined, headers: {} }, upstreamModel: 'm', weight, provider }));
  return { id: 'm', type: 'chat', ownedBy: 'x', created: 0, routes, totalWeight: weights.reduce((sum, weight) => sum + weight, 0) };
}

function observer(): AttemptObserver & { failures: Array<[string, unknown]> } {
  return {
    upstream: null,
    failures: [],
    noteUpstreamFailure(credentialId, error) {
      this.failures.push([credentialId, error]);
    },
  };
}

/** A clock that moves 5 ms each time it is read. */
function ticking(): () => number {
  let now = 1_000;
  return () => (now += 5);
}

const live = new AbortController().signal;
const unavailable = () => new GatewayError('upstream_error', 'down');

describe('Router', () => {
  it('orders candidates with the random source it was given', () => {
    // Draws at the low end pick the first remaining route each time; at the high end the last.
    expect(new Router({ random: () => 0 }).candidates(model([1, 1, 1])).map((route) => route.credential.id)).toEqual(['u0', 'u1', 'u2']);
    expect(new Router({ random: () => 0.999 }).candidates(model([1, 1, 1])).map((route) => route.credential.id)).toEqual(['u2', 'u1', 'u0']);
  });

  it('fails over on a retryable failure and reports every attempt, timed by its clock', async () => {
    const router = new Router({ random: () => 0, now: ticking() });
    const seen = observer();
    const routed = await router.route(model([1, 1, 1]), { cancellation: live, observer: seen }, async (route) => {
      if (route.credential.id !== 'u2') throw unavailable();
      return 'answer';
    });
    expect(routed.value).toBe('answer');
    expect(routed.route.credential.id).toBe('u2');
    expect(routed.attempts.map(({ credentialId, startedAt, durationMs, error }) => [credentialId, startedAt, durationMs, error === null ? null : 'failed'])).toEqual([
      ['u0', 1_005, 5, 'failed'],
      ['u1', 1_015, 5, 'failed'],
      ['u2', 1_025, 5, null],
    ]);
    expect(seen.upstream).toBe('u2');
    expect(seen.failures.map(([credentialId]) => credentialId)).toEqual(['u0', 'u1']);
    // Unclassified upstream errors are read from their code.
    expect(routed.attempts.map((attempt) => attempt.failure?.class ?? null)).toEqual(['server', 'server', null]);
  });

  it('hands each attempt its credential and keeps the head of every answer, a success included', async () => {
    const router = new Router({ random: () => 0 });
    const routed = await router.route(model([1, 1]), { cancellation: live, observer: observer() }, async (route, attempt) => {
      expect(attempt.credential).toBe(route.credential);
      const limited = route.credential.id === 'u0';
      attempt.answered(limited ? 429 : 200, { headers: { 'x-ratelimit-remaining-requests': limited ? '0' : '41' } });
      if (limited) throw new GatewayError('upstream_rate_limited', 'slow down', { retryAfterSeconds: 1 });
      return 'answer';
    });
    expect(routed.attempts.map(({ credentialId, statusCode, answerHead }) => [credentialId, statusCode, answerHead?.headers['x-ratelimit-remaining-requests']])).toEqual([
      ['u0', 429, '0'],
      ['u1', 200, '41'],
    ]);
  });

  it('keeps the classifier\'s outcome of each failed attempt', async () => {
    const limited = new GatewayError('upstream_rate_limited', 'slow down', {
      retryAfterSeconds: 9,
      upstream: { class: 'rate_limit', status: 429, retryAfterSeconds: 9, rateLimitHeaders: { 'retry-after': '9' }, credentialId: 'u0', message: 'slow down' },
    });
    const routed = await new Router({ random: () => 0 }).route(model([1, 1]), { cancellation: live, observer: observer() }, async (route) => {
      if (route.credential.id === 'u0') throw limited;
      return 'ok';
    });
    expect(routed.attempts[0]?.failure).toBe(limited.upstream);
    expect(failureOf(new GatewayError('upstream_invalid_response', 'not a completion'), 'u1')).toMatchObject({ class: 'protocol', status: null, credentialId: 'u1' });
  });

  it('stops at a failure that is not retryable, and at the last candidate', async () => {
    const router = new Router({ random: () => 0 });
    const refused = new GatewayError('upstream_bad_request', 'bad');
    const tried: string[] = [];
    await expect(
      router.route(model([1, 1]), { cancellation: live, observer: observer() }, async (route) => {
        tried.push(route.credential.id);
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(tried).toEqual(['u0']);

    const seen = observer();
    const last = unavailable();
    await expect(router.route(model([1, 1]), { cancellation: live, observer: seen }, async (route) => Promise.reject(route.credential.id === 'u1' ? last : unavailable()))).rejects.toBe(last);
    // The log names the credential tried last even when every one failed.
    expect(seen.upstream).toBe('u1');
  });

  it('tries no other candidate once the caller has gone', async () => {
    const controller = new AbortController();
    const cancellation = controller.signal;
    const tried: string[] = [];
    const seen = observer();
    await expect(
      new Router({ random: () => 0 }).route(model([1, 1]), { cancellation, observer: seen }, async (route) => {
        tried.push(route.credential.id);
        controller.abort();
        throw unavailable();
      }),
    ).rejects.toMatchObject({ code: 'upstream_error' });
    expect(tried).toEqual(['u0']);
    expect(seen.failures).toEqual([]);
  });

  it('says no upstream is available for a model with no candidates', async () => {
    await expect(new Router().attempt([], { cancellation: live, observer: observer() }, async () => 'never')).rejects.toMatchObject({ code: 'no_upstream_available' });
  });
});

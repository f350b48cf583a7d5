import { describe, expect, it } from 'vitest';
import type { RoutingStrategy } from '../config/index.js';
import { GatewayError, type UpstreamFailure } from '../errors/index.js';
import type { ChatProvider } from '../providers/provider-adapter.js';
import type { AttemptSummary } from './attempt-outcome.js';
import { CredentialHealth } from './credential-health.js';
import type { CatalogModel, Route } from './model-catalog.js';
import { hash32 } from './rendezvous.js';
import { Router, type AttemptObserver, type RoutedOperation } from './router.js';
import { SessionBindings, type BindingStore, type RoutingSession } from './session-bindings.js';

const provider = {} as ChatProvider;

interface PoolEntry {
  weight?: number;
  priority?: number;
  maxInFlight?: number;
}

function pool(entries: PoolEntry[], strategy: RoutingStrategy = 'weighted'): CatalogModel<'chat'> {
  const routes: Route<'chat'>[] = entries.map((entry, index) => ({
    credential: { id: `u${index}`, apiKey: undefined, headers: {} },
    upstreamModel: 'm',
    weight: entry.weight ?? 1,
    priority: entry.priority ?? 0,
    maxInFlight: entry.maxInFlight ?? null,
    credentialHash: hash32(`u${index}`),
    provider,
    native: null,
    responses: null,
  }));
  return { id: 'm', type: 'chat', ownedBy: 'x', created: 0, routes, totalWeight: routes.reduce((sum, route) => sum + route.weight, 0), strategy };
}

class Observer implements AttemptObserver {
  upstream: string | null = null;
  failures: string[] = [];
  attempts: AttemptSummary[] = [];
  held: Array<() => void> = [];
  noteUpstreamFailure(credentialId: string): void {
    this.failures.push(credentialId);
  }
  noteAttempt(attempt: AttemptSummary): void {
    this.attempts.push(attempt);
  }
  holdUntilFinished(release: () => void): void {
    this.held.push(release);
  }
  finish(): void {
    for (const release of this.held.splice(0)) release();
  }
}

/** Bindings in a map, with the clock of the test: what the shared state does, without its TTL sweep. */
class MapStore implements BindingStore {
  readonly values = new Map<string, string>();
  async getAndTouch(key: string): Promise<string | null> {
    return this.values.get(key) ?? null;
  }
  async setIfAbsent(key: string, value: string): Promise<string> {
    const existing = this.values.get(key);
    if (existing !== undefined) return existing;
    this.values.set(key, value);
    return value;
  }
  async compareAndSet(key: string, expected: string | null, value: string): Promise<boolean> {
    if ((this.values.get(key) ?? null) !== expected) return false;
    this.values.set(key, value);
    return true;
  }
}

/** A deterministic generator (mulberry32), so splits are checked without flakiness. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function setup(options: { maxAttempts?: number; queueTimeoutMs?: number; random?: () => number } = {}) {
  const clock = { now: 1_000_000 };
  const now = () => clock.now;
  const health = new CredentialHealth({ now });
  const store = new MapStore();
  const bindings = new SessionBindings(store, 3_600_000, (error) => {
    throw error;
  });
  const router = new Router({
    now,
    health,
    bindings,
    random: options.random ?? seeded(7),
    maxAttempts: options.maxAttempts ?? 3,
    queueTimeoutMs: options.queueTimeoutMs ?? 5_000,
  });
  return { clock, health, store, router };
}

const live = new AbortController().signal;

function classified(
  code: 'upstream_error' | 'upstream_rate_limited' | 'upstream_auth_failed' | 'upstream_bad_request',
  failure: Partial<UpstreamFailure> & Pick<UpstreamFailure, 'class'>,
): GatewayError {
  const upstream: UpstreamFailure = { status: null, retryAfterSeconds: null, rateLimitHeaders: {}, credentialId: 'x', message: code, ...failure };
  return new GatewayError(code, code, { upstream, ...(upstream.retryAfterSeconds === null ? {} : { retryAfterSeconds: upstream.retryAfterSeconds }) });
}

const serverError = () => classified('upstream_error', { class: 'server', status: 502 });
const answer: RoutedOperation<string, 'chat'> = async (route) => route.credential.id;

function session(id: string): RoutingSession {
  return { team: 'search', model: 'm', id, source: 'header' };
}

describe('Router: pools and strategies', () => {
  it('splits unbound requests by weight: 1:1:2 lands within 10% of 25/25/50', async () => {
    const { router } = setup();
    const model = pool([{ weight: 1 }, { weight: 1 }, { weight: 2 }]);
    const counts: Record<string, number> = { u0: 0, u1: 0, u2: 0 };
    for (let request = 0; request < 2_000; request++) {
      const observer = new Observer();
      const routed = await router.route(model, { cancellation: live, observer }, answer);
      counts[routed.value] = (counts[routed.value] as number) + 1;
      observer.finish();
    }
    expect(counts['u0']).toBeGreaterThan(450);
    expect(counts['u0']).toBeLessThan(550);
    expect(counts['u1']).toBeGreaterThan(450);
    expect(counts['u1']).toBeLessThan(550);
    expect(counts['u2']).toBeGreaterThan(900);
    expect(counts['u2']).toBeLessThan(1_100);
  });

  it('least-busy sends new requests away from a credential that holds slow ones', async () => {
    const { router } = setup();
    const model = pool([{}, {}, {}], 'least-busy');
    // u0 serves two long requests (their slots held until their responses end).
    router.inFlight.acquire('u0');
    router.inFlight.acquire('u0');
    const served = new Set<string>();
    for (let request = 0; request < 20; request++) {
      const observer = new Observer();
      served.add((await router.route(model, { cancellation: live, observer }, answer)).value);
      observer.finish();
    }
    expect(served.has('u0')).toBe(false);
    expect([...served].sort()).toEqual(['u1', 'u2']);
  });

  it('ordered uses the second credential only while the first is unavailable', async () => {
    const { router, clock, health } = setup();
    const model = pool([{ priority: 5 }, { priority: 0 }, { priority: 9 }], 'ordered');
    const served: string[] = [];
    const once = async () => {
      const observer = new Observer();
      served.push((await router.route(model, { cancellation: live, observer }, answer)).value);
      observer.finish();
    };
    await once();
    health.failed('u1', classified('upstream_error', { class: 'connect' }).upstream as UpstreamFailure);
    await once();
    await once();
    clock.now += 1_000;
    await once();
    await once();
    expect(served).toEqual(['u1', 'u0', 'u0', 'u1', 'u1']);
  });
});

describe('Router: failover and credential states', () => {
  it('429 with Retry-After 2 on A: the request succeeds on B, A cools 2 s and serves again after', async () => {
    const { router, clock, health } = setup({ random: () => 0 });
    const model = pool([{}, {}]);
    const observer = new Observer();
    const routed = await router.route(model, { cancellation: live, observer }, async (route, attempt) => {
      if (route.credential.id === 'u0') {
        attempt.answered(429, { headers: { 'retry-after': '2' } });
        throw classified('upstream_rate_limited', { class: 'rate_limit', status: 429, retryAfterSeconds: 2 });
      }
      attempt.answered(200, { headers: {} });
      return 'ok';
    });
    expect(routed.route.credential.id).toBe('u1');
    expect(observer.attempts).toEqual([
      { credential: 'u0', outcome: 'upstream_rate_limited', status: 429, ms: 0 },
      { credential: 'u1', outcome: 'ok', status: 200, ms: 0 },
    ]);
    expect(health.status('u0')).toMatchObject({ state: 'cooling', until: clock.now + 2_000, cause: 'rate_limit' });
    for (let request = 0; request < 5; request++)
      expect((await router.route(model, { cancellation: live, observer: new Observer() }, answer)).value).toBe('u1');
    clock.now += 2_000;
    expect((await router.route(model, { cancellation: live, observer: new Observer() }, answer)).value).toBe('u0');
    expect(health.status('u0').state).toBe('healthy');
  });

  it('connection failures open cooldowns that grow while the pool serves on, and a success resets them', async () => {
    const { router, clock, health } = setup({ random: () => 0 });
    const model = pool([{}, {}]);
    const refused = () => classified('upstream_error', { class: 'connect' });
    const cooldowns: number[] = [];
    for (let probe = 0; probe < 4; probe++) {
      const routed = await router.route(model, { cancellation: live, observer: new Observer(), caller: 'search' }, async (route) => {
        if (route.credential.id === 'u0') throw refused();
        return route.credential.id;
      });
      expect(routed.value).toBe('u1');
      const until = health.status('u0').until as number;
      cooldowns.push(until - clock.now);
      // While it cools, u1 serves without u0 being called.
      expect((await router.route(model, { cancellation: live, observer: new Observer() }, answer)).value).toBe('u1');
      clock.now = until;
    }
    expect(cooldowns).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect((await router.route(model, { cancellation: live, observer: new Observer() }, answer)).value).toBe('u0');
    expect(health.status('u0')).toMatchObject({ state: 'healthy', cooldownsInARow: 0 });
  });

  it("keeps the pool in service through one team's 5xx, and cools a credential on 5xx in a row from two teams", async () => {
    const { router, health } = setup();
    const model = pool([{}, {}]);
    const failing = async (caller: string) =>
      router
        .route(model, { cancellation: live, observer: new Observer(), caller }, async (route) =>
          route.credential.id === 'u0' || caller === 'attacker' ? Promise.reject(serverError()) : route.credential.id,
        )
        .then(
          (routed) => routed.value,
          () => 'failed',
        );
    for (let request = 0; request < 100; request++) expect(await failing('attacker')).toBe('failed');
    expect([health.status('u0').state, health.status('u1').state]).toEqual(['healthy', 'healthy']);
    // u0 fails for everyone: three failures in a row, of two teams, cool it.
    const served: string[] = [];
    for (let request = 0; request < 6; request++) served.push(await failing(request % 2 === 0 ? 'search' : 'billing'));
    expect(served).toEqual(['u1', 'u1', 'u1', 'u1', 'u1', 'u1']);
    expect(health.status('u0')).toMatchObject({ state: 'cooling', cause: 'server' });
  });

  it('never lets failures of the server hold more than half of a pool, nor the last credential of one, out of use', async () => {
    const { router, clock, health } = setup();
    const refused = classified('upstream_error', { class: 'connect' }).upstream as UpstreamFailure;
    const served = async (model: CatalogModel<'chat'>) => {
      const values = new Set<string>();
      for (let request = 0; request < 40; request++) values.add((await router.route(model, { cancellation: live, observer: new Observer() }, answer)).value);
      return [...values].sort();
    };
    // A pool of one: its credential cools, and is used all the same.
    health.failed('u0', refused);
    expect(health.status('u0').state).toBe('cooling');
    expect(await served(pool([{}]))).toEqual(['u0']);
    // A pool of four, all refusing: two stay out, those whose cooldowns end last.
    health.reset('u0');
    for (const id of ['u0', 'u1', 'u2', 'u3']) {
      health.failed(id, refused);
      clock.now += 100;
    }
    clock.now -= 500;
    expect(await served(pool([{}, {}, {}, {}]))).toEqual(['u0', 'u1']);
    // A spent quota or a refused key is not capped: nothing a request could do there.
    health.reset('u0');
    health.reset('u1');
    health.failed('u0', classified('upstream_auth_failed', { class: 'auth', status: 401 }).upstream as UpstreamFailure);
    health.failed('u1', classified('upstream_rate_limited', { class: 'quota', status: 429 }).upstream as UpstreamFailure);
    await expect(router.route(pool([{}, {}]), { cancellation: live, observer: new Observer() }, answer)).rejects.toMatchObject({
      code: 'upstream_quota_exhausted',
    });
  });

  it('returns an upstream 400 after one attempt without touching the credential', async () => {
    const { router, health } = setup({ random: () => 0 });
    const tried: string[] = [];
    const refused = classified('upstream_bad_request', { class: 'caller', status: 400 });
    await expect(
      router.route(pool([{}, {}]), { cancellation: live, observer: new Observer() }, async (route) => {
        tried.push(route.credential.id);
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(tried).toEqual(['u0']);
    expect(health.status('u0').state).toBe('healthy');
  });

  it('marks a credential the upstream refused (401) failed, and serves the request on the next', async () => {
    const { router, health } = setup({ random: () => 0 });
    const routed = await router.route(pool([{}, {}]), { cancellation: live, observer: new Observer() }, async (route) => {
      if (route.credential.id === 'u0') throw classified('upstream_auth_failed', { class: 'auth', status: 401 });
      return 'ok';
    });
    expect(routed.route.credential.id).toBe('u1');
    expect(health.status('u0')).toMatchObject({ state: 'failed', reason: 'the upstream refused the credential (401)' });
  });

  it('tries at most max_attempts credentials', async () => {
    const { router } = setup({ maxAttempts: 3 });
    const observer = new Observer();
    await expect(router.route(pool([{}, {}, {}, {}, {}]), { cancellation: live, observer }, async () => Promise.reject(serverError()))).rejects.toMatchObject({
      code: 'upstream_error',
    });
    expect(observer.attempts).toHaveLength(3);
  });

  it('answers 429 upstream_rate_limited with the earliest end of a cooldown when the pool cools for 429s, else 503', async () => {
    const { router, health } = setup();
    const model = pool([{}, {}]);
    health.failed('u0', classified('upstream_rate_limited', { class: 'rate_limit', status: 429, retryAfterSeconds: 30 }).upstream as UpstreamFailure);
    health.failed('u1', classified('upstream_rate_limited', { class: 'rate_limit', status: 429, retryAfterSeconds: 12 }).upstream as UpstreamFailure);
    await expect(router.route(model, { cancellation: live, observer: new Observer() }, answer)).rejects.toMatchObject({
      code: 'upstream_rate_limited',
      status: 429,
      retryAfterSeconds: 12,
    });
    health.reset('u0');
    health.reset('u1');
    health.failed('u0', classified('upstream_auth_failed', { class: 'auth', status: 401 }).upstream as UpstreamFailure);
    health.disable('u1');
    await expect(router.route(model, { cancellation: live, observer: new Observer() }, answer)).rejects.toMatchObject({
      code: 'no_upstream_available',
      status: 503,
      retryAfterSeconds: 60,
    });
  });

  it('tries no other credential once the caller has gone, and leaves the credential alone', async () => {
    const { router, health } = setup();
    const controller = new AbortController();
    const tried: string[] = [];
    await expect(
      router.route(pool([{}, {}]), { cancellation: controller.signal, observer: new Observer() }, async (route) => {
        tried.push(route.credential.id);
        controller.abort();
        throw serverError();
      }),
    ).rejects.toMatchObject({ code: 'upstream_error' });
    expect(tried).toHaveLength(1);
    expect(health.status(tried[0] as string).state).toBe('healthy');
  });
});

describe('Router: max_in_flight', () => {
  it('holds a slot until the response ends; a request that finds every credential full waits for one', async () => {
    const { router } = setup({ queueTimeoutMs: 5_000 });
    const model = pool([{ maxInFlight: 1 }, { maxInFlight: 1 }]);
    const first = new Observer();
    const second = new Observer();
    await router.route(model, { cancellation: live, observer: first }, answer);
    await router.route(model, { cancellation: live, observer: second }, answer);
    const waiting = router.route(model, { cancellation: live, observer: new Observer() }, answer);
    let settled = false;
    void waiting.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    first.finish();
    expect(await waiting).toMatchObject({ value: first.upstream });
  });

  it('gives up after queue_timeout with 503 no_upstream_available and Retry-After', async () => {
    const { router } = setup({ queueTimeoutMs: 20 });
    const model = pool([{ maxInFlight: 1 }]);
    await router.route(model, { cancellation: live, observer: new Observer() }, answer);
    await expect(router.route(model, { cancellation: live, observer: new Observer() }, answer)).rejects.toMatchObject({
      code: 'no_upstream_available',
      retryAfterSeconds: 1,
    });
  });
});

describe('Router: session affinity', () => {
  it('keeps 100 turns of a session on one credential; when it fails they move once and stay moved', async () => {
    const { router, clock } = setup();
    const model = pool([{}, {}, {}, {}]);
    const affinities: string[] = [];
    const served: string[] = [];
    let failing: string | null = null;
    for (let turn = 0; turn < 100; turn++) {
      if (turn === 50) failing = served[0] as string;
      const observer = new Observer();
      const routed = await router.route(model, { cancellation: live, observer, session: session('conversation-1') }, async (route) => {
        if (route.credential.id === failing) throw serverError();
        return route.credential.id;
      });
      observer.finish();
      served.push(routed.value);
      affinities.push(routed.session?.affinity as string);
      clock.now += 10_000;
    }
    expect(new Set(served.slice(0, 50)).size).toBe(1);
    expect(new Set(served.slice(50)).size).toBe(1);
    expect(served[50]).not.toBe(served[0]);
    expect(affinities[0]).toBe('new');
    expect(affinities.slice(1, 50).every((affinity) => affinity === 'kept')).toBe(true);
    expect(affinities[50]).toBe('moved');
    // The failing credential recovers (its cooldown ends); the session does not move back.
    expect(affinities.slice(51).every((affinity) => affinity === 'kept')).toBe(true);
  });

  it('binds alike in two routers that never talked (rendezvous), and spreads sessions over the pool', async () => {
    const model = pool([{}, {}, {}, {}]);
    const first = setup();
    const second = setup();
    const spread = new Set<string>();
    for (let index = 0; index < 40; index++) {
      const call = () => ({ cancellation: live, observer: new Observer(), session: session(`s-${index}`) });
      const one = await first.router.route(model, call(), answer);
      const other = await second.router.route(model, call(), answer);
      expect(other.value).toBe(one.value);
      spread.add(one.value);
    }
    expect(spread.size).toBe(4);
  });

  it('serves one request elsewhere when its credential is at max_in_flight, without moving the binding', async () => {
    const { router } = setup();
    const model = pool([{ maxInFlight: 1 }, { maxInFlight: 1 }, { maxInFlight: 1 }]);
    const holder = new Observer();
    const bound = await router.route(model, { cancellation: live, observer: holder, session: session('busy') }, answer);
    const overflow = await router.route(model, { cancellation: live, observer: new Observer(), session: session('busy') }, answer);
    expect(overflow.value).not.toBe(bound.value);
    expect(overflow.session?.affinity).toBe('overflow');
    holder.finish();
    const back = await router.route(model, { cancellation: live, observer: new Observer(), session: session('busy') }, answer);
    expect(back).toMatchObject({ value: bound.value, session: { affinity: 'kept', id: 'busy', source: 'header' } });
  });

  it('moves a session whose credential was disabled to the next of its rendezvous order', async () => {
    const { router, health, store } = setup();
    const model = pool([{}, {}, {}]);
    const bound = (await router.route(model, { cancellation: live, observer: new Observer(), session: session('s') }, answer)).value;
    health.disable(bound);
    const moved = await router.route(model, { cancellation: live, observer: new Observer(), session: session('s') }, answer);
    expect(moved.session?.affinity).toBe('moved');
    expect([...store.values.values()]).toEqual([moved.value]);
    // The same order in a router that never saw the session: the next credential of its rendezvous ranking.
    const fresh = setup();
    fresh.health.disable(bound);
    expect((await fresh.router.route(model, { cancellation: live, observer: new Observer(), session: session('s') }, answer)).value).toBe(moved.value);
  });
});

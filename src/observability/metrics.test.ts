import { describe, expect, it } from 'vitest';
import { parseExposition, total } from '../../test/support/prometheus-text.js';
import { requestLogEntry } from '../../test/support/request-log-entries.js';
import { GatewayMetrics, type CredentialGauges, type MetricsSources, type QuotaGauge } from './metrics.js';

const STATES = ['healthy', 'cooling', 'failed', 'disabled'];

function metricsWith(credentials: CredentialGauges[], overrides: Partial<MetricsSources> = {}): GatewayMetrics {
  return new GatewayMetrics(
    { team: true, maxLabelValues: 500, isModel: (id) => id === 'gpt-4o-mini', onCapReached: () => undefined },
    {
      credentials: () => credentials,
      credentialStates: STATES,
      inFlight: () => new Map(),
      quotaUse: async () => [],
      requestLogQueueRows: () => 0,
      requestLogDroppedRows: () => 0,
      ...overrides,
    },
  );
}

describe('GatewayMetrics', () => {
  it("shows each credential's state, cooldown and requests in flight, and an account's quota windows and token expiry", async () => {
    const now = Date.now();
    const metrics = metricsWith([
      { id: 'key-a', state: 'healthy', until: null, inFlight: 3, quotaUse: [], tokenExpiresAt: null },
      { id: 'key-b', state: 'cooling', until: now + 30_000, inFlight: 0, quotaUse: [], tokenExpiresAt: null },
      {
        id: 'chatgpt-alice',
        state: 'healthy',
        until: null,
        inFlight: 1,
        quotaUse: [
          { window: 'primary', usedRatio: 0.42 },
          { window: 'secondary', usedRatio: 0.07 },
        ],
        tokenExpiresAt: now + 3_600_000,
      },
    ]);
    const samples = parseExposition(await metrics.text());
    for (const credential of ['key-a', 'key-b', 'chatgpt-alice']) {
      expect(samples.filter((sample) => sample.name === 'switchyard_credential_state' && sample.labels['credential'] === credential)).toHaveLength(4);
      expect(total(samples, 'switchyard_credential_state', { credential })).toBe(1);
    }
    expect(total(samples, 'switchyard_credential_state', { credential: 'key-b', state: 'cooling' })).toBe(1);
    const cooldown = total(samples, 'switchyard_credential_cooldown_seconds', { credential: 'key-b' });
    expect(cooldown).toBeGreaterThan(28);
    expect(cooldown).toBeLessThanOrEqual(30);
    expect(total(samples, 'switchyard_credential_cooldown_seconds', { credential: 'key-a' })).toBe(0);
    expect(total(samples, 'switchyard_credential_in_flight', { credential: 'key-a' })).toBe(3);
    expect(total(samples, 'switchyard_account_quota_used_ratio', { credential: 'chatgpt-alice', window: 'primary' })).toBe(0.42);
    expect(total(samples, 'switchyard_account_quota_used_ratio', { credential: 'chatgpt-alice', window: 'secondary' })).toBe(0.07);
    expect(samples.filter((sample) => sample.name === 'switchyard_account_quota_used_ratio' && sample.labels['credential'] !== 'chatgpt-alice')).toEqual([]);
    const expiry = total(samples, 'switchyard_account_token_expiry_seconds', { credential: 'chatgpt-alice' });
    expect(expiry).toBeGreaterThan(3_590);
    expect(samples.filter((sample) => sample.name === 'switchyard_account_token_expiry_seconds')).toHaveLength(1);
  });

  it('counts refusals by holder kind and limit (as the config names it), state errors by operation, and streams under way', async () => {
    const metrics = metricsWith([], {
      inFlight: () =>
        new Map([
          ['chat.completions', { open: 5, streaming: 2 }],
          ['embeddings', { open: 1, streaming: 0 }],
        ]),
    });
    metrics.limitRefused('team', 'maxConcurrent');
    metrics.limitRefused('team', 'maxConcurrent');
    metrics.limitRefused('token', 'rpm');
    metrics.stateFailed('session_bindings');
    const samples = parseExposition(await metrics.text());
    expect(total(samples, 'switchyard_limit_refusals_total', { holder_kind: 'team', limit: 'max_concurrent' })).toBe(2);
    expect(total(samples, 'switchyard_limit_refusals_total', { holder_kind: 'token', limit: 'rpm' })).toBe(1);
    expect(total(samples, 'switchyard_state_errors_total', { operation: 'session_bindings' })).toBe(1);
    expect(total(samples, 'switchyard_requests_in_flight', { endpoint: 'chat.completions' })).toBe(5);
    expect(total(samples, 'switchyard_streams_active', { endpoint: 'chat.completions' })).toBe(2);
    expect(total(samples, 'switchyard_streams_active', { endpoint: 'embeddings' })).toBe(0);
  });

  it("shows quotas' shares spent as the config names them, the holders nearest their quotas first past the label cap, and none while the state is away", async () => {
    let answer: () => Promise<QuotaGauge[]> = async () => [
      { holderKind: 'team', holder: 'search', limit: 'tokensPerDay', usedRatio: 0.25 },
      { holderKind: 'project', holder: 'search/ranker', limit: 'usdPerMonth', usedRatio: 0.9 },
      { holderKind: 'team', holder: 'ads', limit: 'tokensTotal', usedRatio: 0.1 },
    ];
    const capped = new GatewayMetrics(
      { team: true, maxLabelValues: 2, isModel: () => true, onCapReached: () => undefined },
      {
        credentials: () => [],
        credentialStates: STATES,
        inFlight: () => new Map(),
        quotaUse: () => answer(),
        requestLogQueueRows: () => 0,
        requestLogDroppedRows: () => 0,
      },
    );
    const samples = parseExposition(await capped.text());
    const quotas = samples.filter((sample) => sample.name === 'switchyard_quota_used_ratio');
    expect(quotas.map((sample) => [sample.labels, sample.value])).toEqual([
      [{ holder_kind: 'project', holder: 'search/ranker', limit: 'usd_per_month' }, 0.9],
      [{ holder_kind: 'team', holder: 'search', limit: 'tokens_per_day' }, 0.25],
    ]);
    answer = async () => {
      throw new Error('state away');
    };
    const without = parseExposition(await capped.text());
    expect(without.filter((sample) => sample.name === 'switchyard_quota_used_ratio')).toEqual([]);
    // Counted while a scrape collects, so shown by the next one: this one shows the failure of the one before.
    expect(total(parseExposition(await capped.text()), 'switchyard_state_errors_total', { operation: 'quota_read' })).toBe(1);
  });

  it('counts a request under `unknown` for a model it does not serve, and its overhead only when it succeeded upstream', async () => {
    const metrics = metricsWith([]);
    const attempts = [{ credential: 'key-a', outcome: 'ok', status: 200, ms: 80 }];
    metrics.requestFinished(requestLogEntry(Date.now(), { model: 'typo-model', status: 404, errorCode: 'model_not_found', attempts: null, ttfbMs: null }));
    metrics.requestFinished(requestLogEntry(Date.now(), { attempts, ttfbMs: 83, latencyMs: 90 }));
    metrics.requestFinished(requestLogEntry(Date.now(), { attempts, status: 502, errorCode: 'upstream_error', ttfbMs: 85 }));
    const samples = parseExposition(await metrics.text());
    expect(total(samples, 'switchyard_requests_total', { model: 'unknown', error_code: 'model_not_found' })).toBe(1);
    expect(total(samples, 'switchyard_gateway_overhead_seconds_count')).toBe(1);
    expect(total(samples, 'switchyard_gateway_overhead_seconds_sum')).toBeCloseTo(0.003, 6);
    expect(total(samples, 'switchyard_upstream_attempts_total', { credential: 'key-a', outcome: 'ok' })).toBe(2);
  });
});

import { Counter, Gauge, type Aggregator, type Registry } from 'prom-client';

/** A credential as the gauges show it, read at each scrape. */
export interface CredentialGauges {
  readonly id: string;
  readonly state: string;
  /** When its cooldown ends (ms since the epoch); null when it is not cooling. */
  readonly until: number | null;
  readonly inFlight: number;
  /** An OAuth account's quota windows as the upstream last reported them; empty for an API key. */
  readonly quotaUse: ReadonlyArray<{ readonly window: string; readonly usedRatio: number }>;
  /** An OAuth account's access token's expiry (ms since the epoch); null for an API key or when unknown. */
  readonly tokenExpiresAt: number | null;
}

/** One quota of a team (`holder`: its id) or a project (`team/project`), as the share spent. */
export interface QuotaGauge {
  readonly holderKind: string;
  readonly holder: string;
  /** The limit's name as the code has it (`tokensPerDay`); shown as the config writes it (`tokens_per_day`). */
  readonly limit: string;
  readonly usedRatio: number;
}

/** Live figures read at each scrape, from the parts that hold them. */
export interface MetricsSources {
  /** Every credential, as the router sees it now. */
  credentials: () => Iterable<CredentialGauges>;
  /** The states a credential can be in (each gets a series: 1 for the current one, 0 for the others). */
  credentialStates: readonly string[];
  /** Requests whose response has not closed, by endpoint, and of them those streaming (head sent, body not ended). */
  inFlight: () => ReadonlyMap<string, { readonly open: number; readonly streaming: number }>;
  /** Each quota of the teams and projects that have one, as the share spent (read from the shared state at the scrape, off the request path). */
  quotaUse: () => Promise<ReadonlyArray<QuotaGauge>>;
  /** Request-log rows waiting to be written. */
  requestLogQueueRows: () => number;
  /** Request-log rows dropped so far (the queue was full while the database refused writes). */
  requestLogDroppedRows: () => number;
  /** Trace spans dropped so far (the export queue was full, or an export failed); 0 while tracing is off. */
  spansDropped?: () => number;
}

/** `maxConcurrent` → `max_concurrent`: a limit's name as the config and the admin API write it. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

type SetGauge = (labels: Record<string, string>, value: number) => void;

/**
 * The metrics read at each scrape from the parts that hold them (docs/metrics.md): credentials,
 * accounts, quotas, requests in flight, the request log's queue, dropped spans. Nothing of these
 * is counted on a request's path. `stateFailed` counts a quota read that failed.
 */
export function registerScrapeMetrics(registers: Registry[], sources: MetricsSources, maxLabelValues: number, stateFailed: (operation: string) => void): void {
  /**
   * A gauge whose series are all set again at each scrape by `fill`. Under `serve --workers` the
   * primary adds up the workers' gauges (`sum`, their default), but a gauge read from the shared
   * state says the same in every worker: it is shown once (`max`, or `first` for a state), not N times.
   */
  const gauge = (name: string, help: string, labelNames: readonly string[], fill: (set: SetGauge) => void | Promise<void>, aggregator: Aggregator = 'sum') =>
    new Gauge({
      name,
      help,
      labelNames,
      registers,
      aggregator,
      async collect() {
        this.reset();
        await fill((labels, value) => this.set(labels, value));
      },
    });
  /** A counter of a total another part keeps: told the difference at each scrape. */
  const total = (name: string, help: string, read: () => number) => {
    let toldSoFar = 0;
    new Counter({
      name,
      help,
      registers,
      collect() {
        const value = read();
        if (value > toldSoFar) this.inc(value - toldSoFar);
        toldSoFar = value;
      },
    });
  };

  gauge(
    'switchyard_credential_state',
    "A credential's state: 1 for the current one, 0 for the others.",
    ['credential', 'state'],
    (set) => {
      for (const credential of sources.credentials())
        for (const state of sources.credentialStates) set({ credential: credential.id, state }, credential.state === state ? 1 : 0);
    },
    'first',
  );
  gauge(
    'switchyard_credential_cooldown_seconds',
    'Seconds until a cooling credential may serve again; 0 when it is not cooling.',
    ['credential'],
    (set) => {
      const now = Date.now();
      for (const credential of sources.credentials())
        set({ credential: credential.id }, credential.until === null ? 0 : Math.max(0, (credential.until - now) / 1000));
    },
    'max',
  );
  gauge(
    'switchyard_credential_in_flight',
    'Requests in flight on a credential, in every gateway process sharing the state.',
    ['credential'],
    (set) => {
      for (const credential of sources.credentials()) set({ credential: credential.id }, credential.inFlight);
    },
    'max',
  );
  gauge(
    'switchyard_account_quota_used_ratio',
    "A ChatGPT account's quota window, the share used, as its last answer reported it.",
    ['credential', 'window'],
    (set) => {
      for (const credential of sources.credentials())
        for (const { window, usedRatio } of credential.quotaUse) set({ credential: credential.id, window }, usedRatio);
    },
    'max',
  );
  gauge(
    'switchyard_account_token_expiry_seconds',
    "Seconds until a ChatGPT account's access token expires (negative once it has; it is refreshed before use).",
    ['credential'],
    (set) => {
      const now = Date.now();
      for (const credential of sources.credentials())
        if (credential.tokenExpiresAt !== null) set({ credential: credential.id }, (credential.tokenExpiresAt - now) / 1000);
    },
    'max',
  );
  gauge(
    'switchyard_quota_used_ratio',
    "The share spent of each team's and project's quotas (1 = the quota is reached).",
    ['holder_kind', 'holder', 'limit'],
    async (set) => {
      let uses: ReadonlyArray<QuotaGauge>;
      try {
        uses = await sources.quotaUse();
      } catch {
        // The state did not answer: no quota series this scrape, and the error is counted.
        stateFailed('quota_read');
        return;
      }
      // Past the label cap, the holders nearest their quotas are the ones shown.
      const shown = new Set<string>();
      for (const use of [...uses].sort((first, second) => second.usedRatio - first.usedRatio)) {
        if (!shown.has(use.holder)) {
          if (shown.size >= maxLabelValues) continue;
          shown.add(use.holder);
        }
        set({ holder_kind: use.holderKind, holder: use.holder, limit: snakeCase(use.limit) }, use.usedRatio);
      }
    },
    'max',
  );
  gauge('switchyard_requests_in_flight', 'Requests whose response has not ended.', ['endpoint'], (set) => {
    for (const [endpoint, { open }] of sources.inFlight()) set({ endpoint }, open);
  });
  gauge('switchyard_streams_active', 'Responses streaming now (their head sent, their body not ended), by endpoint.', ['endpoint'], (set) => {
    for (const [endpoint, { streaming }] of sources.inFlight()) set({ endpoint }, streaming);
  });
  gauge('switchyard_request_log_queue_rows', 'Request-log rows waiting to be written.', [], (set) => set({}, sources.requestLogQueueRows()));
  total(
    'switchyard_request_log_dropped_total',
    'Request-log rows dropped because the queue was full while the database refused writes.',
    sources.requestLogDroppedRows,
  );
  total(
    'switchyard_spans_dropped_total',
    'Trace spans dropped: the export queue was full, or the collector did not take them.',
    () => sources.spansDropped?.() ?? 0,
  );
}

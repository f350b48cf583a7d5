import { statSync } from 'node:fs';
import { analyze, openBuiltStores, option, prepareDatabase, RARE_MODEL, say, type SeedRow } from './request-log-bench-db.js';
import { seededRandom } from './timed-runs.js';

/**
 * Fills a request log with realistic rows for the admin query bench (bench/request-log-queries.ts),
 * through the gateway's own batch insert and migrations:
 *
 *   node dist-bench/seed-request-log.js --database sqlite:/tmp/request-log.db [--rows 1000000]
 *   node dist-bench/seed-request-log.js --database postgres://postgres@127.0.0.1:5432/bench_request_log
 *
 * 30 days of traffic ending now, from 2,000 tokens of 200 teams (a few tokens busy, most quiet),
 * 12 models (one rare), ~60% of chat requests in sessions of ~20 turns, ~4% errors of every kind,
 * ids as four gateway processes make them. Deterministic: the same rows every run (but the end time).
 * A PostgreSQL database is created when missing; a log that already has rows is refused.
 */

const MODELS: ReadonlyArray<readonly [name: string, weight: number, endpoint: string]> = [
  ['gpt-4o-mini', 30, 'chat.completions'],
  ['gpt-4o', 18, 'chat.completions'],
  ['claude-sonnet', 14, 'chat.completions'],
  ['text-embedding-3-small', 10, 'embeddings'],
  ['gpt-5-codex', 8, 'native.responses'],
  ['gemini-flash', 6, 'chat.completions'],
  ['llama-70b', 5, 'chat.completions'],
  ['o3', 3, 'responses'],
  ['bge-reranker', 2.5, 'rerank'],
  ['whisper-1', 2, 'audio.transcriptions'],
  ['tts-1', 1.45, 'audio.speech'],
  [RARE_MODEL, 0.05, 'chat.completions'],
];
const TEAMS = 200;
const TOKENS = 2_000;
const CREDENTIALS = 24;
const LIVE_SESSIONS = 3_000;
const DAYS = 30;
const BATCH = 10_000;

interface Session {
  id: string;
  token: number;
  turnsLeft: number;
  turnsTaken: number;
  credential: number;
  source: string;
}

class TrafficModel {
  private readonly next = seededRandom(19);
  private readonly modelTotal = MODELS.reduce((sum, [, weight]) => sum + weight, 0);
  private readonly sessions: Session[] = [];
  private sessionCount = 0;
  private readonly processes = ['8f3a21c07e', '1b44d09a2f', 'c0ffee1234', '5e6d7c8b9a'];
  private readonly counters = [0, 0, 0, 0];

  constructor() {
    for (let index = 0; index < LIVE_SESSIONS; index++) this.sessions.push(this.newSession());
  }

  /** Busy tokens and quiet ones: the square of a uniform draw favours the first tokens. */
  private token(): number {
    return Math.floor(TOKENS * this.next() ** 2);
  }

  private newSession(): Session {
    this.sessionCount += 1;
    const header = this.next() < 0.5;
    return {
      id: header
        ? `conv-${this.sessionCount.toString(16).padStart(8, '0')}`
        : `inf_${((this.sessionCount * 2_654_435_761) >>> 0).toString(16)}${this.sessionCount.toString(16)}`,
      token: this.token(),
      turnsLeft: 1 + Math.floor(-Math.log(1 - this.next()) * 20),
      turnsTaken: 0,
      credential: Math.floor(this.next() * CREDENTIALS),
      source: header ? 'header' : 'inferred',
    };
  }

  private model(): readonly [string, number, string] {
    let draw = this.next() * this.modelTotal;
    for (const model of MODELS) {
      draw -= model[1];
      if (draw <= 0) return model;
    }
    return MODELS[0] as readonly [string, number, string];
  }

  row(createdAt: number): SeedRow {
    const replica = Math.floor(this.next() * 4);
    this.counters[replica] = ((this.counters[replica] ?? 0) + 1) & 0x3fffffff;
    const id = `req_${createdAt.toString(16).padStart(12, '0')}${this.processes[replica] ?? ''}${(this.counters[replica] ?? 0).toString(16).padStart(10, '0')}`;
    const [model, , endpoint] = this.model();
    const chat = endpoint === 'chat.completions' || endpoint === 'responses' || endpoint === 'native.responses';
    let session: Session | null = null;
    let affinity: string | null = null;
    if (chat && this.next() < 0.6) {
      const slot = Math.floor(this.next() * LIVE_SESSIONS);
      session = this.sessions[slot] as Session;
      if (session.turnsLeft <= 0) this.sessions[slot] = session = this.newSession();
      affinity = session.turnsTaken === 0 ? 'new' : 'kept';
      session.turnsLeft -= 1;
      session.turnsTaken += 1;
    }
    const token = session?.token ?? this.token();
    const team = token % TEAMS;
    const projects = team % 4;
    const credential = session?.credential ?? Math.floor(this.next() * CREDENTIALS);
    const outcome = this.outcome();
    const prompt = 50 + Math.floor(this.next() ** 2 * 8_000);
    const completion = endpoint === 'embeddings' ? 0 : 10 + Math.floor(this.next() ** 2 * 2_000);
    const served = outcome.status < 400 || outcome.status === 499;
    const failedOver = outcome.status === 200 && this.next() < 0.05;
    const latency = 80 + this.next() ** 2 * 20_000;
    return {
      id,
      clientRequestId: this.next() < 0.1 ? `trace-${id.slice(-12)}` : null,
      createdAt,
      tokenId: outcome.status === 401 ? null : `tok_${token.toString(16).padStart(6, '0')}`,
      team: outcome.status === 401 ? null : `team-${team}`,
      project: outcome.status === 401 || projects === 0 ? null : `project-${token % projects}`,
      endpoint,
      model: outcome.status === 404 ? null : model,
      upstream: outcome.upstream ? `cred-${credential}` : null,
      upstreamModel: outcome.upstream ? model : null,
      sessionId: outcome.status === 401 ? null : (session?.id ?? null),
      status: outcome.status,
      latencyMs: latency,
      ttfbMs: outcome.upstream ? latency * this.next() : null,
      promptTokens: served ? prompt : null,
      completionTokens: served ? completion : null,
      cachedTokens: served && this.next() < 0.3 ? Math.floor(prompt / 2) : null,
      reasoningTokens: served && model === 'o3' ? Math.floor(completion / 2) : null,
      costUsd: served ? (prompt * 0.15 + completion * 0.6) / 1_000_000 : null,
      usageSource: served ? (outcome.status === 499 ? 'estimated' : 'upstream') : 'none',
      errorCode: outcome.code,
      sessionSource: session === null || outcome.status === 401 ? null : session.source,
      affinity: outcome.status === 401 ? null : affinity,
      attempts: !outcome.upstream
        ? null
        : failedOver
          ? [
              { credential: `cred-${(credential + 1) % CREDENTIALS}`, outcome: 'upstream_rate_limited', status: 429, ms: 15 },
              { credential: `cred-${credential}`, outcome: 'ok', status: 200, ms: latency },
            ]
          : [{ credential: `cred-${credential}`, outcome: outcome.code ?? 'ok', status: outcome.upstreamStatus, ms: latency }],
    };
  }

  /** ~96% answered; the rest every kind of error a gateway logs. */
  private outcome(): { status: number; code: string | null; upstream: boolean; upstreamStatus: number | null } {
    const draw = this.next() * 100;
    if (draw < 96) return { status: 200, code: null, upstream: true, upstreamStatus: 200 };
    if (draw < 97) return { status: 429, code: this.next() < 0.5 ? 'rate_limit_exceeded' : 'upstream_rate_limited', upstream: false, upstreamStatus: null };
    if (draw < 97.5) return { status: 502, code: 'upstream_error', upstream: true, upstreamStatus: 500 };
    if (draw < 97.8) return { status: 503, code: 'no_upstream_available', upstream: false, upstreamStatus: null };
    if (draw < 98) return { status: 504, code: 'upstream_timeout', upstream: true, upstreamStatus: null };
    if (draw < 98.5) return { status: 499, code: 'client_closed_request', upstream: true, upstreamStatus: 200 };
    if (draw < 99) return { status: 422, code: 'validation_error', upstream: false, upstreamStatus: null };
    if (draw < 99.4) return { status: 401, code: 'invalid_api_key', upstream: false, upstreamStatus: null };
    if (draw < 99.7) return { status: 404, code: 'model_not_found', upstream: false, upstreamStatus: null };
    return { status: 400, code: 'upstream_bad_request', upstream: true, upstreamStatus: 400 };
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const url = option(argv, 'database');
  if (url === undefined) throw new Error('usage: seed-request-log --database sqlite:PATH|postgres://…/NAME [--rows N]');
  const rows = Number(option(argv, 'rows') ?? 1_000_000);
  await prepareDatabase(url);
  const stores = await openBuiltStores(url);
  try {
    const existing = await stores.requestLogs.count();
    if (existing > 0) throw new Error(`the request log already has ${existing} rows: seed an empty database`);
    const end = Date.now();
    const start = end - DAYS * 86_400_000;
    const step = (end - start) / rows;
    const traffic = new TrafficModel();
    const began = performance.now();
    for (let first = 0; first < rows; first += BATCH) {
      const batch: SeedRow[] = [];
      for (let index = first; index < Math.min(rows, first + BATCH); index++) batch.push(traffic.row(Math.floor(start + index * step)));
      await stores.requestLogs.insertBatch(batch);
      if ((first / BATCH) % 20 === 0) say(`${first + batch.length} rows`);
    }
    const seconds = (performance.now() - began) / 1000;
    say(`${rows} rows in ${seconds.toFixed(1)} s (${((seconds * 1e6) / rows).toFixed(1)} µs a row, batches of ${BATCH})`);
  } finally {
    await stores.close();
  }
  await analyze(url);
  if (url.startsWith('sqlite:')) say(`file: ${(statSync(url.slice('sqlite:'.length)).size / 1e6).toFixed(0)} MB`);
}

await main();

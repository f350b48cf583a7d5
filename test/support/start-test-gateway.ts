import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { vi } from 'vitest';
import { stringify } from 'yaml';
import type { CreateTokenInput } from '../../src/access/index.js';
import { loadConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import type { RequestLogEntry } from '../../src/store/index.js';

export interface TestGateway {
  gateway: Gateway;
  /** The official SDK, authenticated with `token`, no retries. */
  client: OpenAI;
  /** A token of team `test`, made at start. */
  token: string;
  directory: string;
  configPath: string;
  /** A token (team `platform` unless `input` says otherwise), making its project first when `input` names one. */
  createToken(input?: Partial<CreateTokenInput>): Promise<string>;
  /** The official SDK authenticated with `token`, no retries. */
  clientFor(token: string): OpenAI;
  /** The request log row of a response, once the batch writer has written it. */
  logRow(requestId: string | null): Promise<RequestLogEntry>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  /** The environment the config is loaded with (`${VAR}`, proxy variables); empty by default. */
  env?: NodeJS.ProcessEnv;
  /** Collects the log lines (level info and above), parsed; logs are off without it. */
  logLines?: Array<Record<string, unknown>>;
  /** The database; SQLite in the gateway's temporary directory when unset. */
  databaseUrl?: string;
  /** Run when the gateway has shut down, before its directory is removed (closing the fakes it was in front of). */
  afterClose?: () => Promise<void>;
}

/**
 * A real gateway from a real config file: the given upstreams and models (plus any other keys),
 * SQLite in a temporary directory, a free port, logs off, and a token for the SDK.
 */
export async function startTestGateway(
  document: { upstreams: unknown[]; models: unknown[] } & Record<string, unknown>,
  options: TestGatewayOptions = {},
): Promise<TestGateway> {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const configPath = join(directory, 'switchyard.yaml');
  writeFileSync(
    configPath,
    stringify({
      server: { host: '127.0.0.1', port: 0, shutdown_timeout_ms: 5_000 },
      database: { url: options.databaseUrl ?? `sqlite:${join(directory, 'switchyard.db')}` },
      logging: { level: 'silent' },
      ...document,
    }),
  );
  const { logLines } = options;
  const logger =
    logLines === undefined
      ? createLogger('silent')
      : createLogger(
          'info',
          new Writable({
            write(chunk: Buffer, _encoding, done) {
              for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
              done();
            },
          }),
        );
  const gateway = await startGateway(loadConfig({ configPath, env: options.env ?? {} }).config, { logger });
  const { secret } = await gateway.tokens.create({ team: 'test' });
  const clientFor = (token: string): OpenAI => new OpenAI({ apiKey: token, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 10_000 });
  return {
    gateway,
    client: clientFor(secret),
    token: secret,
    directory,
    configPath,
    async createToken(input = {}) {
      const { project } = input;
      if (project !== undefined && project !== null) {
        // A token's project must exist in its team: made here (the store answers false when it is already).
        const team = input.team ?? 'platform';
        await gateway.stores.teams.insertTeam({ id: team, name: team, limits: {}, createdAt: Date.now(), updatedAt: Date.now() });
        await gateway.stores.teams.insertProject({ team, id: project, name: project, limits: {}, createdAt: Date.now(), updatedAt: Date.now() });
      }
      return (await gateway.tokens.create({ team: 'platform', ...input })).secret;
    },
    clientFor,
    logRow(requestId) {
      return vi.waitFor(
        async () => {
          const [row] = requestId === null ? [] : await gateway.stores.requestLogs.query({ requestId, limit: 1 });
          if (row === undefined) throw new Error(`no request log row for ${String(requestId)}`);
          return row;
        },
        { timeout: 5_000, interval: 20 },
      );
    },
    async close() {
      await gateway.shutdown();
      await options.afterClose?.();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

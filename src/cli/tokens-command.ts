import { allPages, parseDuration, TokenService, type TokenUpdate } from '../access/index.js';
import { tokenToWire } from '../api/token-wire.js';
import type { TokenRecord } from '../store/index.js';
import { refusalsAsFailures } from './cli-errors.js';
import { CliFailure, EXIT_USAGE, type CliIo } from './cli-io.js';
import { knownModelIds } from './known-models.js';
import { withStores, type ConfigOption } from './cli-stores.js';
import { formatLimits, limitChangesFromFlags, limitsFromFlags, type LimitFlags } from './limit-options.js';
import { printTable } from './print-table.js';

export interface CreateOptions extends ConfigOption, LimitFlags {
  team: string;
  project?: string;
  scopes?: string;
  models?: string;
  expiresIn?: string;
  name?: string;
}

export interface UpdateOptions extends ConfigOption, LimitFlags {
  scopes?: string;
  /** A comma-separated allow-list, or `all` for every model. */
  models?: string;
  /** A duration from now, or `never`. */
  expiresIn?: string;
  name?: string;
}

/** The TokenService the admin API calls, over the database the gateway uses. */
function withTokens<T>(options: ConfigOption, io: CliIo, action: (service: TokenService) => Promise<T>): Promise<T> {
  return withStores(options, io, (stores, config) =>
    refusalsAsFailures(() =>
      action(
        new TokenService(
          stores.tokens,
          config.auth.token_prefix,
          Date.now,
          async () => undefined,
          () => knownModelIds(config),
        ),
      ),
    ),
  );
}

function lifetime(text: string): number {
  const ms = parseDuration(text);
  if (ms === null) throw new CliFailure(`--expires-in: expected a duration such as 30d, 12h, 90m or 2w, got "${text}"`, EXIT_USAGE);
  return ms;
}

/** Details go to stderr so that stdout carries the token alone: `TOKEN=$(switchyard tokens create …)` works. */
export async function createTokenCommand(options: CreateOptions, io: CliIo): Promise<number> {
  const expiresInMs = options.expiresIn === undefined ? null : lifetime(options.expiresIn);
  const limits = limitsFromFlags(options);
  const created = await withTokens(options, io, (service) =>
    service.create({
      team: options.team,
      project: options.project ?? null,
      name: options.name ?? null,
      scopes: splitList(options.scopes),
      models: splitList(options.models) ?? null,
      expiresInMs,
      limits,
    }),
  );
  const { record } = created;
  io.stderr(`Created ${record.id} for team ${record.team}${record.project === null ? '' : `, project ${record.project}`}.`);
  describe(record, io);
  io.stderr('Copy the token now: it is not stored and cannot be shown again.');
  io.stdout(created.secret);
  return 0;
}

export async function listTokensCommand(options: ConfigOption & { json?: boolean; team?: string }, io: CliIo): Promise<number> {
  const records = await withTokens(options, io, (service) =>
    allPages((page) => service.list({ ...page, ...(options.team === undefined ? {} : { team: options.team }) })),
  );
  if (options.json === true) {
    io.stdout(
      JSON.stringify(
        records.map((record) => tokenToWire(record)),
        null,
        2,
      ),
    );
    return 0;
  }
  const rows = records.map((record) => {
    const view = tokenToWire(record);
    return [
      view.id,
      view.status,
      view.team,
      view.project ?? '-',
      view.name ?? '-',
      `${view.prefix}…`,
      view.scopes.join(','),
      view.models?.join(',') ?? 'all',
      formatLimits(record.limits),
      view.expires_at ?? 'never',
    ];
  });
  printTable(['ID', 'STATUS', 'TEAM', 'PROJECT', 'NAME', 'TOKEN', 'SCOPES', 'MODELS', 'LIMITS', 'EXPIRES'], rows, io);
  return 0;
}

/** Changes only what a flag names; `--models all` lifts the allow-list, `--expires-in never` the expiry, `--rpm none` (and so on) a limit. */
export async function updateTokenCommand(id: string, options: UpdateOptions, io: CliIo): Promise<number> {
  const changes: TokenUpdate = { limits: limitChangesFromFlags(options) };
  if (options.name !== undefined) changes.name = options.name;
  if (options.scopes !== undefined) changes.scopes = splitList(options.scopes) ?? [];
  if (options.models !== undefined) changes.models = options.models.trim() === 'all' ? null : (splitList(options.models) ?? []);
  if (options.expiresIn !== undefined) {
    if (options.expiresIn.trim() === 'never') changes.expiresAt = null;
    else changes.expiresInMs = lifetime(options.expiresIn);
  }
  const record = await withTokens(options, io, (service) => service.update(id, changes));
  io.stdout(`Updated ${record.id}.`);
  describe(record, io);
  return 0;
}

export async function revokeTokenCommand(id: string, options: ConfigOption, io: CliIo): Promise<number> {
  await withTokens(options, io, (service) => service.revoke(id));
  io.stdout(`Revoked ${id}.`);
  return 0;
}

function describe(record: TokenRecord, io: CliIo): void {
  io.stderr(`  scopes:  ${record.scopes.join(', ')}`);
  io.stderr(`  models:  ${record.models === null ? 'all' : record.models.join(', ')}`);
  io.stderr(`  limits:  ${formatLimits(record.limits)}`);
  io.stderr(`  expires: ${record.expiresAt === null ? 'never' : new Date(record.expiresAt).toISOString()}`);
}

function splitList(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
}

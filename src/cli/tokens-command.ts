import { parseDuration, TokenInputError, TokenService } from '../access/index.js';
import type { TokenRecord } from '../store/index.js';
import { CliFailure, EXIT_USAGE, type CliIo } from './cli-io.js';
import { withStores, type ConfigOption } from './cli-stores.js';
import { printTable } from './print-table.js';

export interface CreateOptions extends ConfigOption {
  team: string;
  project?: string;
  scopes?: string;
  models?: string;
  expiresIn?: string;
  name?: string;
}

function withTokens<T>(options: ConfigOption, io: CliIo, action: (service: TokenService) => Promise<T>): Promise<T> {
  return withStores(options, io, (stores, config) => action(new TokenService(stores.tokens, config.auth.token_prefix)));
}

/** Details go to stderr so that stdout carries the token alone: `TOKEN=$(switchyard tokens create …)` works. */
export async function createTokenCommand(options: CreateOptions, io: CliIo): Promise<number> {
  const expiresInMs = options.expiresIn === undefined ? null : parseDuration(options.expiresIn);
  if (options.expiresIn !== undefined && expiresInMs === null) {
    throw new CliFailure(`--expires-in: expected a duration such as 30d, 12h, 90m or 2w, got "${options.expiresIn}"`, EXIT_USAGE);
  }
  const created = await withTokens(options, io, (service) =>
    service
      .create({
        team: options.team,
        project: options.project ?? null,
        name: options.name ?? null,
        scopes: splitList(options.scopes),
        models: splitList(options.models) ?? null,
        expiresInMs,
      })
      .catch((error: unknown) => {
        throw error instanceof TokenInputError ? new CliFailure(error.message, EXIT_USAGE) : error;
      }),
  );
  const { record } = created;
  io.stderr(`Created ${record.id} for team ${record.team}${record.project === null ? '' : `, project ${record.project}`}.`);
  io.stderr(`  scopes:  ${record.scopes.join(', ')}`);
  io.stderr(`  models:  ${record.models === null ? 'all' : record.models.join(', ')}`);
  io.stderr(`  expires: ${record.expiresAt === null ? 'never' : new Date(record.expiresAt).toISOString()}`);
  io.stderr('Copy the token now: it is not stored and cannot be shown again.');
  io.stdout(created.secret);
  return 0;
}

export async function listTokensCommand(options: ConfigOption & { json?: boolean }, io: CliIo): Promise<number> {
  const records = await withTokens(options, io, (service) => service.list());
  if (options.json === true) {
    io.stdout(JSON.stringify(records.map(publicView), null, 2));
    return 0;
  }
  const rows = records.map((record) => {
    const view = publicView(record);
    return [view.id, view.status, view.team, view.project ?? '-', view.name ?? '-', `${view.prefix}…`, view.scopes.join(','), view.models?.join(',') ?? 'all', view.expires_at ?? 'never'];
  });
  printTable(['ID', 'STATUS', 'TEAM', 'PROJECT', 'NAME', 'TOKEN', 'SCOPES', 'MODELS', 'EXPIRES'], rows, io);
  return 0;
}

export async function revokeTokenCommand(id: string, options: ConfigOption, io: CliIo): Promise<number> {
  const found = await withTokens(options, io, (service) => service.revoke(id));
  if (!found) throw new CliFailure(`no token with id ${id}`, 1);
  io.stdout(`Revoked ${id}.`);
  return 0;
}

/** What may be shown of a token: never the secret or its hash. */
function publicView(record: TokenRecord) {
  const now = Date.now();
  const status = record.revokedAt !== null ? 'revoked' : record.expiresAt !== null && record.expiresAt <= now ? 'expired' : 'active';
  return {
    id: record.id,
    status,
    name: record.name,
    team: record.team,
    project: record.project,
    prefix: record.displayPrefix,
    scopes: record.scopes,
    models: record.models,
    created_at: new Date(record.createdAt).toISOString(),
    expires_at: record.expiresAt === null ? null : new Date(record.expiresAt).toISOString(),
    revoked_at: record.revokedAt === null ? null : new Date(record.revokedAt).toISOString(),
  };
}

function splitList(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((item) => item.trim()).filter(Boolean);
}

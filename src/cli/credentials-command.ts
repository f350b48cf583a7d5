import { readFile } from 'node:fs/promises';
import { UpstreamAccounts } from '../admin/index.js';
import { SecretBox } from '../core/index.js';
import { codexProvider } from '../providers/codex/index.js';
import { asCliFailure } from './cli-errors.js';
import { CliFailure, EXIT_USAGE, type CliIo } from './cli-io.js';
import { withStores, type ConfigOption } from './cli-stores.js';
import { printTable } from './print-table.js';

export interface AddCodexOptions extends ConfigOption {
  id: string;
  authFile: string;
  baseUrl?: string;
  tokenUrl?: string;
}

/**
 * The same service the admin API calls, over the database the gateway uses: a running gateway
 * serves an account added here within seconds (it watches the accounts' revision).
 */
function withAccounts<T>(options: ConfigOption, io: CliIo, action: (accounts: UpstreamAccounts) => Promise<T>): Promise<T> {
  return withStores(options, io, (stores, config) => {
    const key = config.security.secret_key;
    const box = key === undefined ? null : SecretBox.fromText(key);
    if (key !== undefined && box === null)
      throw new CliFailure('SWITCHYARD_SECRET_KEY must be 32 bytes as 64 hex digits or as base64 (e.g. `openssl rand -hex 32`)', EXIT_USAGE);
    const check = (_provider: string, text: string) => {
      if (codexProvider.checkAccountDocument === undefined) throw new Error('cannot be checked');
      return codexProvider.checkAccountDocument(text);
    };
    return action(new UpstreamAccounts(stores.upstreamAccounts, box, check, new Set(config.upstreams.map((upstream) => upstream.id))));
  }).catch((error: unknown) => {
    throw asCliFailure(error);
  });
}

export async function addCodexCommand(options: AddCodexOptions, io: CliIo): Promise<number> {
  let document: string;
  try {
    document = await readFile(options.authFile, 'utf8');
  } catch (error) {
    throw new CliFailure(`--auth-file: ${options.authFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, EXIT_USAGE);
  }
  const added = await withAccounts(options, io, (accounts) =>
    accounts.add({
      id: options.id,
      provider: 'codex',
      document,
      ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
      ...(options.tokenUrl === undefined ? {} : { tokenUrl: options.tokenUrl }),
    }),
  );
  io.stderr(
    `Added ChatGPT account ${added.account_id ?? '?'} as ${added.id}, stored encrypted; running gateways serve it within seconds on models with a route of \`accounts: codex\`.`,
  );
  io.stdout(added.id);
  return 0;
}

export async function removeCredentialCommand(id: string, options: ConfigOption, io: CliIo): Promise<number> {
  await withAccounts(options, io, (accounts) => accounts.remove(id));
  io.stderr(`Removed ${id}; running gateways stop serving it within seconds.`);
  return 0;
}

export async function listAccountsCommand(options: ConfigOption & { json?: boolean }, io: CliIo): Promise<number> {
  const accounts = await withAccounts(options, io, (service) => service.list());
  if (options.json === true) {
    io.stdout(JSON.stringify(accounts, null, 2));
    return 0;
  }
  printTable(
    ['ID', 'PROVIDER', 'ACCOUNT', 'BASE URL', 'ADDED', 'UPDATED'],
    accounts.map((account) => [
      account.id,
      account.provider,
      account.account_id ?? '(sealed)',
      account.base_url ?? 'default',
      account.created_at,
      account.updated_at,
    ]),
    io,
  );
  return 0;
}

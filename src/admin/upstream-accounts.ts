import type { ProviderKind } from '../config/index.js';
import type { SecretBox } from '../core/index.js';
import { echo, GatewayError } from '../errors/index.js';
import type { UpstreamAccountRecord, UpstreamAccountStore } from '../store/index.js';

/** The providers whose credentials are accounts that can be added at run time. */
export const ACCOUNT_PROVIDERS = ['codex'] as const;
export type AccountProvider = (typeof ACCOUNT_PROVIDERS)[number];

export interface NewAccount {
  id: string;
  provider: AccountProvider;
  /** The account's document as its client wrote it (a Codex auth.json). */
  document: string;
  baseUrl?: string;
  tokenUrl?: string;
}

/** An account added at run time, as the admin API and the CLI show it: never its tokens. */
export interface StoredAccountView {
  id: string;
  provider: string;
  /** The upstream's own id of the account (ChatGPT's `chatgpt-account-id`). */
  account_id: string | null;
  base_url: string | null;
  token_url: string | null;
  created_at: string;
  updated_at: string;
}

/** Checks a document for its provider (parses it, finds the account); throws naming what is wrong. */
export type AccountDocumentCheck = (provider: ProviderKind, text: string) => { readonly accountId: string };

const ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** The document's seal is bound to the account's id: a sealed document copied onto another row does not open. */
export function accountSealContext(id: string): string {
  return `upstream-account:${id}`;
}

/**
 * Accounts added at run time (`switchyard credentials add-codex`, `POST /admin/v1/credentials`):
 * checked, sealed under `SWITCHYARD_SECRET_KEY` (AES-256-GCM) and stored; every gateway process
 * sharing the database serves a new one within seconds (it watches the store's revision).
 */
export class UpstreamAccounts {
  constructor(
    private readonly store: UpstreamAccountStore,
    private readonly box: SecretBox | null,
    private readonly check: AccountDocumentCheck,
    /** Ids the config file gives its upstreams: an account may not take one. */
    private readonly configuredIds: ReadonlySet<string>,
    /** Told after a change, so that this process serves it at once rather than at its next poll. */
    private readonly onChange: () => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  async add(account: NewAccount): Promise<StoredAccountView> {
    if (!ID_PATTERN.test(account.id))
      throw new GatewayError('validation_error', 'id: must be 1 to 128 of A-Z a-z 0-9 . _ -', {
        param: 'id',
        detail: [{ loc: ['body', 'id'], msg: 'must be 1 to 128 of A-Z a-z 0-9 . _ -', type: 'string_pattern_mismatch' }],
      });
    if (this.box === null) {
      throw new GatewayError(
        'secret_key_missing',
        'Accounts added at run time are stored encrypted, and this gateway has no key: set SWITCHYARD_SECRET_KEY (32 bytes as 64 hex digits or base64, e.g. `openssl rand -hex 32`) and restart it.',
      );
    }
    if (this.configuredIds.has(account.id))
      throw new GatewayError('credential_exists', `The config file already has an upstream ${echo(account.id)}.`, { param: 'id' });
    let accountId: string;
    try {
      ({ accountId } = this.check(account.provider, account.document));
    } catch (error) {
      throw new GatewayError('invalid_body', `The account's auth document ${(error as Error).message}.`, { param: 'auth' });
    }
    const at = this.now();
    const settings: Record<string, string> = {};
    if (account.baseUrl !== undefined) settings['base_url'] = account.baseUrl;
    if (account.tokenUrl !== undefined) settings['token_url'] = account.tokenUrl;
    const record: UpstreamAccountRecord = {
      id: account.id,
      provider: account.provider,
      settings,
      sealedDocument: this.box.seal(account.document, accountSealContext(account.id)),
      createdAt: at,
      updatedAt: at,
    };
    if (!(await this.store.insert(record))) throw new GatewayError('credential_exists', `An account ${echo(account.id)} was added already.`, { param: 'id' });
    this.onChange();
    return view(record, accountId);
  }

  async remove(id: string): Promise<void> {
    if (this.configuredIds.has(id))
      throw new GatewayError('credential_configured', `The upstream ${echo(id)} is defined in the config file; remove it there.`, { param: 'id' });
    if (!(await this.store.remove(id))) throw new GatewayError('credential_not_found', `No account added at run time has the id ${echo(id)}.`, { param: 'id' });
    this.onChange();
  }

  async list(): Promise<StoredAccountView[]> {
    return (await this.store.list()).map((record) => view(record, this.accountIdOf(record)));
  }

  private accountIdOf(record: UpstreamAccountRecord): string | null {
    if (this.box === null) return null;
    try {
      return this.check(record.provider as ProviderKind, this.box.open(record.sealedDocument, accountSealContext(record.id))).accountId;
    } catch {
      return null;
    }
  }
}

function view(record: UpstreamAccountRecord, accountId: string | null): StoredAccountView {
  return {
    id: record.id,
    provider: record.provider,
    account_id: accountId,
    base_url: record.settings['base_url'] ?? null,
    token_url: record.settings['token_url'] ?? null,
    created_at: new Date(record.createdAt).toISOString(),
    updated_at: new Date(record.updatedAt).toISOString(),
  };
}

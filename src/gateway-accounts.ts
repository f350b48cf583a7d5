import { accountSealContext } from './admin/index.js';
import { runtimeUpstream, endpointOf, type ProviderKind } from './config/index.js';
import type { SecretBox } from './core/index.js';
import type { Endpoints } from './gateway-endpoints.js';
import type { Logger } from './observability/logger.js';
import type { AccountDocument } from './providers/provider-adapter.js';
import type { UpstreamAccountRecord, UpstreamAccountStore } from './store/index.js';

export interface RuntimeAccountsOptions {
  store: UpstreamAccountStore;
  /** Opens and seals the stored documents; without it stored accounts cannot be served (and are said so). */
  box: SecretBox | null;
  endpoints: Endpoints;
  /** The set of credentials changed: the catalog is rebuilt. */
  onChange: () => void;
  logger: Logger;
  /** A failed poll is reported here (the gateway's throttled failure log) instead of a line each time. */
  onPollError?: (error: unknown) => void;
  /** A poll worked again after failing. */
  onPollRecovered?: () => void;
  /** How often the store's revision is read; another process's change is served within this. */
  pollMs?: number;
}

/**
 * The accounts added at run time, served: at start every stored account is wired like a config
 * entry (its document opened with the secret key); then the store's revision is read every
 * `pollMs`, and on a change new accounts are wired, removed ones dropped, and accounts whose
 * document changed (another process refreshed their tokens) re-read it.
 */
export class RuntimeAccounts {
  private revision = -1;
  /** Every stored account seen, served or not, with the version of it last looked at. */
  private readonly updatedAt = new Map<string, number>();
  /** The accounts this process serves: only these are dropped when they leave the store. */
  private readonly served = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  private readonly pollMs: number;

  constructor(private readonly options: RuntimeAccountsOptions) {
    this.pollMs = options.pollMs ?? 1_000;
  }

  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => {
      void this.sync().then(
        () => this.options.onPollRecovered?.(),
        (error: unknown) =>
          this.options.onPollError !== undefined
            ? this.options.onPollError(error)
            : this.options.logger.warn({ err: error }, 'reading the accounts added at run time failed; retrying'),
      );
    }, this.pollMs);
    this.timer.unref();
  }

  /** Catches up with the store now (also what a change made in this process calls). */
  sync(): Promise<void> {
    this.syncing ??= this.catchUp().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }

  private async catchUp(): Promise<void> {
    const { store, endpoints, logger } = this.options;
    const revision = await store.readRevision();
    if (revision === this.revision) return;
    const records = await store.list();
    let changed = false;
    const present = new Set(records.map((record) => record.id));
    for (const id of [...this.updatedAt.keys()]) {
      if (present.has(id)) continue;
      this.updatedAt.delete(id);
      // One that was never served (its id is a configured upstream's) leaves that upstream alone.
      if (!this.served.delete(id)) continue;
      endpoints.remove(id);
      changed = true;
      logger.info({ credential: id }, 'account removed; no longer served');
    }
    for (const record of records) {
      const known = this.updatedAt.get(record.id);
      if (known === record.updatedAt) continue;
      if (!this.served.has(record.id)) {
        // New, or one that could not be served before and has changed since: (re)tried.
        if (await this.wire(record)) changed = true;
        continue;
      }
      this.updatedAt.set(record.id, record.updatedAt);
      await endpoints.credentials.get(record.id)?.credential.account?.reload();
    }
    this.revision = revision;
    if (changed) this.options.onChange();
  }

  private async wire(record: UpstreamAccountRecord): Promise<boolean> {
    const { endpoints, logger, box } = this.options;
    if (endpoints.credentials.has(record.id)) {
      logger.warn({ credential: record.id }, 'an account added at run time has the id of a configured upstream; it is not served');
      this.updatedAt.set(record.id, record.updatedAt);
      return false;
    }
    if (box === null) {
      logger.warn({ credential: record.id }, 'an account added at run time cannot be served: SWITCHYARD_SECRET_KEY is not set, so its tokens cannot be opened');
      this.updatedAt.set(record.id, record.updatedAt);
      return false;
    }
    try {
      const entry = runtimeUpstream({ id: record.id, provider: record.provider as ProviderKind, ...record.settings });
      await endpoints.add(entry, endpointOf(entry, `${entry.provider} account ${entry.id}`), { document: this.document(record.id, box), runtime: true });
      this.updatedAt.set(record.id, record.updatedAt);
      this.served.add(record.id);
      logger.info({ credential: record.id, provider: record.provider }, 'account added at run time; now served');
      return true;
    } catch (error) {
      // Marked as seen so that a broken record is said once, not every poll; a change to it retries.
      this.updatedAt.set(record.id, record.updatedAt);
      logger.warn({ credential: record.id, err: error }, 'an account added at run time cannot be served');
      return false;
    }
  }

  /** The account's document in the database: opened with the secret key when read, sealed when a refresh writes it. */
  private document(id: string, box: SecretBox): AccountDocument {
    const { store } = this.options;
    return {
      description: 'the database (sealed)',
      read: async () => {
        const record = await store.get(id);
        if (record === null) throw new Error(`account ${id} is no longer in the database`);
        return box.open(record.sealedDocument, accountSealContext(id));
      },
      write: async (text) => {
        await store.updateDocument(id, box.seal(text, accountSealContext(id)), Date.now());
      },
    };
  }
}

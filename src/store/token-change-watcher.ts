import type pg from 'pg';
import type { Database } from './open-database.js';
import { TOKEN_CHANGE_CHANNEL, type TokenStore } from './token-store.js';

/**
 * Tells the token cache that another process (the CLI, another replica) changed the tokens table.
 * `takeChange` sits on the request path, so it is synchronous and costs about a microsecond.
 */
export interface TokenChangeWatcher {
  takeChange(): boolean;
  close(): Promise<void>;
}

export interface WatchOptions {
  /** Safety-net poll for PostgreSQL, in case a notification is lost while LISTEN reconnects. */
  pollIntervalMs: number;
  onError?: (error: unknown) => void;
}

export function watchTokenChanges(database: Database, tokens: TokenStore, initialRevision: number, options: WatchOptions): TokenChangeWatcher {
  if (database.sqlite !== null) return new SqliteTokenChangeWatcher(database.sqlite, initialRevision);
  if (database.postgres !== null) return new PostgresTokenChangeWatcher(database.postgres, tokens, initialRevision, options);
  throw new Error(`no token change watcher for ${database.dialect}`);
}

/** SQLite bumps `data_version` only for commits made by other connections, so a check is a memory read. */
class SqliteTokenChangeWatcher implements TokenChangeWatcher {
  private readonly dataVersion;
  private readonly revision;
  private lastDataVersion: number;
  private lastRevision: number;
  private lastCheckedAt = 0;

  constructor(sqlite: NonNullable<Database['sqlite']>, initialRevision: number) {
    this.dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
    this.revision = sqlite.prepare("select value from revisions where name = 'tokens'").pluck();
    this.lastDataVersion = Number(this.dataVersion.get());
    this.lastRevision = initialRevision;
  }

  takeChange(): boolean {
    // At most once a millisecond: under load many requests share a check, and a revocation
    // committed within the same millisecond as a request is a race whichever way it goes.
    const now = performance.now();
    if (now - this.lastCheckedAt < 1) return false;
    this.lastCheckedAt = now;
    try {
      const dataVersion = Number(this.dataVersion.get());
      if (dataVersion === this.lastDataVersion) return false;
      // Another connection wrote something; only a token revision change matters (request logs do not).
      const revision = Number(this.revision.get());
      this.lastDataVersion = dataVersion;
      if (revision === this.lastRevision) return false;
      this.lastRevision = revision;
      return true;
    } catch {
      // A database that cannot be read this instant (locked, busy_timeout 0) must not fail the
      // request; the change is seen by a later check, since nothing above was taken as read.
      return false;
    }
  }

  async close(): Promise<void> {}
}

class PostgresTokenChangeWatcher implements TokenChangeWatcher {
  private changed = false;
  private closed = false;
  private client: pg.Client | null = null;
  private lastRevision: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly postgres: NonNullable<Database['postgres']>,
    private readonly tokens: TokenStore,
    initialRevision: number,
    private readonly options: WatchOptions,
  ) {
    this.lastRevision = initialRevision;
    this.timer = setInterval(() => void this.poll(), options.pollIntervalMs);
    this.timer.unref();
    void this.listen();
  }

  takeChange(): boolean {
    if (!this.changed) return false;
    this.changed = false;
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new this.postgres.driver.Client(this.postgres.config);
    client.on('notification', () => {
      this.changed = true;
    });
    client.on('error', (error) => {
      this.options.onError?.(error);
      this.client = null;
      client.end().catch(() => undefined);
      setTimeout(() => void this.listen(), 1_000).unref();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${TOKEN_CHANGE_CHANNEL}`);
      this.client = client;
      // Anything committed while we were not listening is caught by comparing revisions.
      await this.poll();
    } catch (error) {
      this.options.onError?.(error);
      client.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => void this.listen(), 1_000).unref();
    }
  }

  private async poll(): Promise<void> {
    try {
      const revision = await this.tokens.readRevision();
      if (revision !== this.lastRevision) {
        this.lastRevision = revision;
        this.changed = true;
      }
    } catch (error) {
      this.options.onError?.(error);
    }
  }
}

import type { ProviderKind } from '../config/index.js';
import { GatewayError } from '../errors/index.js';
import { RECENT_WINDOW_MS, type CredentialHealth, type CredentialState, type InFlight, type RecentAttempts, type RecentCount } from '../routing/index.js';
import type { CredentialAccount } from '../providers/provider-adapter.js';

/** A credential as the admin API shows it. Times are ISO 8601. */
export interface CredentialView {
  id: string;
  provider: ProviderKind;
  state: CredentialState;
  /** When a cooldown ends; null in the other states and while the probe that ends a cooldown is under way. A cooldown already past shows `healthy`. */
  until: string | null;
  reason: string | null;
  /** When it entered its state; null for a credential that has been healthy since the start. */
  since: string | null;
  /** Cooldowns in a row without a success (the backoff step). */
  cooldowns_in_a_row: number;
  /** Requests in flight on it, in every gateway process that shares the state. */
  in_flight: number;
  last_error: string | null;
  /** Attempts on it in the last `window_seconds`, how many failed through its fault, and the others' mean time to the answer, as this process counted them. */
  recent: { window_seconds: number; attempts: number; failures: number; mean_ms: number | null };
  /** `config` (an `upstreams[]` entry) or `runtime` (an account added at run time, removable with DELETE). */
  origin: 'config' | 'runtime';
  /** An OAuth account's own state (codex: account id, plan, last refresh, quota as last reported); null for API keys. */
  account: Readonly<Record<string, unknown>> | null;
}

function recentOf(count: RecentCount | null): CredentialView['recent'] {
  return {
    window_seconds: RECENT_WINDOW_MS / 1_000,
    attempts: count?.attempts ?? 0,
    failures: count?.failures ?? 0,
    mean_ms: count?.meanMs ?? null,
  };
}

/** What the admin service knows of each configured credential. */
export interface AdministeredCredential {
  readonly provider: ProviderKind;
  readonly credential?: { readonly account?: CredentialAccount };
  readonly runtime?: boolean;
}

/**
 * What operators see and change of the upstream credentials: the admin API's service (the CLI's
 * too when it grows the command). Changes go through the credential state machine, so they are
 * logged and shared like the router's own.
 */
export class CredentialAdmin {
  constructor(
    private readonly credentials: ReadonlyMap<string, AdministeredCredential>,
    private readonly health: CredentialHealth,
    private readonly inFlight: InFlight,
    private readonly recent: RecentAttempts | null = null,
  ) {}

  list(): CredentialView[] {
    return [...this.credentials.keys()].map((id) => this.view(id));
  }

  get(id: string): CredentialView {
    return this.view(this.known(id));
  }

  disable(id: string): CredentialView {
    this.health.disable(this.known(id));
    return this.view(id);
  }

  enable(id: string): CredentialView {
    this.health.enable(this.known(id));
    return this.view(id);
  }

  /** Ends a cooldown or a failure; the backoff starts over. */
  reset(id: string): CredentialView {
    this.health.reset(this.known(id));
    return this.view(id);
  }

  private known(id: string): string {
    if (!this.credentials.has(id))
      throw new GatewayError('credential_not_found', `No upstream credential has the id ${JSON.stringify(id.slice(0, 64))}.`, { param: 'id' });
    return id;
  }

  private view(id: string): CredentialView {
    // As it is now: a cooldown whose time has come shows so, though no request has touched it since.
    const status = this.health.current(id);
    const entry = this.credentials.get(id) as AdministeredCredential;
    return {
      id,
      provider: entry.provider,
      state: status.state,
      until: status.until === null ? null : new Date(status.until).toISOString(),
      reason: status.reason,
      since: status.since === 0 ? null : new Date(status.since).toISOString(),
      cooldowns_in_a_row: status.cooldownsInARow,
      in_flight: this.inFlight.count(id),
      last_error: status.lastError,
      recent: recentOf(this.recent?.count(id) ?? null),
      origin: entry.runtime === true ? 'runtime' : 'config',
      account: entry.credential?.account?.describe() ?? null,
    };
  }
}

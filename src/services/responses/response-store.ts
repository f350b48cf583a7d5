import { GatewayError } from '../../errors/index.js';
import { isRecord } from './convert-chat-usage.js';
import type { ResponseInputItem } from './responses-request.js';

/** The shared-state operations stored responses need (`SharedState` has them). */
export interface ResponseStateStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

/** What the gateway keeps of a response, for the requests that continue it. */
export interface StoredResponse {
  /**
   * The session it was routed in: a continuation without a session of its own takes it, and so
   * reaches the credential that answered (its prompt cache, or the upstream that holds the response).
   */
  session: string | null;
  /**
   * The whole conversation up to and including this response, as input items: the earlier turns,
   * this turn's input, its output. Null for a response an upstream produced and keeps itself (the
   * passthrough): the gateway only remembers where it was made.
   */
  items: ResponseInputItem[] | null;
}

/**
 * Responses the gateway produced, kept in the shared state for `responses.retention`, so that
 * `previous_response_id` and `item_reference` work over upstreams that keep nothing (everything
 * served by conversion to chat), in every gateway process sharing `state.url`. Keys name the
 * team: another team's ids resolve to nothing. Each output item is also kept under its own id,
 * for item references.
 *
 * A conversation is stored whole with each response, so that continuing it is one read; the
 * price is that a long conversation is stored once per turn, until each turn's retention ends.
 */
export class ResponseStore {
  constructor(
    private readonly state: ResponseStateStore,
    private readonly retentionMs: number,
    /** A write that failed: the response was answered, but cannot be continued by id. */
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Length-prefixed, so that no team or id can be mistaken for another. */
  static responseKey(team: string, id: string): string {
    return `response:${team.length}:${team}${id}`;
  }

  static itemKey(team: string, id: string): string {
    return `response-item:${team.length}:${team}${id}`;
  }

  /** The team's stored response, or null when there is none (never stored, expired, another team's). */
  async find(team: string, id: string): Promise<StoredResponse | null> {
    const stored = parse(await this.read(ResponseStore.responseKey(team, id)));
    if (!isRecord(stored)) return null;
    const { session, items } = stored;
    return { session: typeof session === 'string' ? session : null, items: Array.isArray(items) ? (items as ResponseInputItem[]) : null };
  }

  /** An output item of one of the team's stored responses, in input form; null when unknown. */
  async findItem(team: string, id: string): Promise<ResponseInputItem | null> {
    const item = parse(await this.read(ResponseStore.itemKey(team, id)));
    return isRecord(item) ? (item as unknown as ResponseInputItem) : null;
  }

  /** Keeps a response and its output items (those with an id). A failed write is reported, not thrown. */
  async save(team: string, id: string, response: StoredResponse, outputItems: readonly ResponseInputItem[]): Promise<void> {
    const writes = [this.state.set(ResponseStore.responseKey(team, id), JSON.stringify(response), this.retentionMs)];
    for (const item of outputItems) {
      if (typeof item.id === 'string' && item.id !== '') writes.push(this.state.set(ResponseStore.itemKey(team, item.id), JSON.stringify(item), this.retentionMs));
    }
    const results = await Promise.allSettled(writes);
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) this.onError(failed.reason);
  }

  /** A read that fails cannot be told from a response that does not exist: the caller must hear which. */
  private async read(key: string): Promise<string | null> {
    try {
      return await this.state.get(key);
    } catch (error) {
      throw new GatewayError('state_unavailable', 'Stored responses cannot be read right now (the shared state is unreachable); retry shortly.', { cause: error });
    }
  }
}

function parse(value: string | null): unknown {
  if (value === null) return null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return null;
  }
}

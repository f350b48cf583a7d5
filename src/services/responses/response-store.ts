import { GatewayError } from '../../errors/index.js';
import { isObject } from '../../core/index.js';
import type { ResponseInputItem } from '../../protocols/openai-responses/responses-types.js';

/** The shared-state operations stored responses need (`SharedState` has them). */
export interface ResponseStateStore {
  get(key: string): Promise<string | null>;
  setWithinBudget(
    pool: string,
    group: string,
    entries: ReadonlyArray<{ key: string; value: string }>,
    ttlMs: number,
    budget: { groupBytes: number; totalBytes: number },
  ): Promise<{ stored: boolean; evicted: number }>;
}

/** `responses.max_bytes_per_team` and `responses.max_bytes`. */
export interface ResponseBudget {
  teamBytes: number;
  totalBytes: number;
}

/** What one turn of a conversation stores: its own items, and links to the turns before it. */
export interface StoredTurn {
  /** The session it was routed in (see StoredResponse.session). */
  session: string | null;
  /**
   * The ids of the responses before it in its conversation, nearest last, at most
   * `LINKS_PER_TURN`: the oldest of them links on to the ones before it, so a conversation is
   * read back in one read per `LINKS_PER_TURN` turns while each turn stores a bounded list.
   */
  earlier: readonly string[];
  /** This turn's input and output; null for a response an upstream keeps itself (the passthrough). */
  items: ResponseInputItem[] | null;
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
  /** What a turn continuing this response links to (`StoredTurn.earlier`). */
  links: string[];
}

/** How many earlier turns a stored turn names: a conversation of N turns is read in N / 16 + 1 round trips. */
export const LINKS_PER_TURN = 16;
/** Far past any conversation a model's context holds; a guard against a cycle in what the store returns. */
const MAX_TURNS = 10_000;
/** The budget pool of stored responses in the shared state; each team is a group of it. */
const POOL = 'responses';

/**
 * Responses the gateway produced, kept in the shared state for `responses.retention`, so that
 * `previous_response_id` and `item_reference` work over upstreams that keep nothing (everything
 * served by conversion to chat), in every gateway process sharing `state.url`. Keys name the
 * team: another team's ids resolve to nothing. Each output item is also kept under its own id,
 * for item references.
 *
 * A conversation is stored once: each turn only its own items, with links to the turns before
 * it, read back by `find`. What a team stores counts against `responses.max_bytes_per_team` and
 * all teams' against `responses.max_bytes` (SharedState.setWithinBudget): past either, the oldest
 * stored responses are evicted, so a team's newest conversation keeps working while a flood of
 * them holds no more than the budget. See docs/responses-api.md.
 */
export class ResponseStore {
  constructor(
    private readonly state: ResponseStateStore,
    private readonly retentionMs: number,
    private readonly budget: ResponseBudget,
    /** A write that failed or was refused: the response was answered, but cannot be continued by id. */
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Length-prefixed, so that no team or id can be mistaken for another. */
  static responseKey(team: string, id: string): string {
    return `response:${team.length}:${team}${id}`;
  }

  static itemKey(team: string, id: string): string {
    return `response-item:${team.length}:${team}${id}`;
  }

  /**
   * The team's stored response with its whole conversation, or null when it or any turn before it
   * is not there (never stored, expired, evicted, another team's): a conversation with a gap in it
   * cannot be continued faithfully.
   */
  async find(team: string, id: string): Promise<StoredResponse | null> {
    const newest = parseTurn(await this.read(ResponseStore.responseKey(team, id)));
    if (newest === null) return null;
    const links = [...newest.earlier, id].slice(-LINKS_PER_TURN);
    if (newest.items === null) return { session: newest.session, items: null, links };
    // Newest first; each batch is the previous batch's oldest turn's links, read at once.
    const turns: StoredTurn[] = [newest];
    let batch = newest.earlier;
    while (batch.length > 0) {
      if (turns.length + batch.length > MAX_TURNS) return null;
      const read = await Promise.all(batch.map(async (earlierId) => parseTurn(await this.read(ResponseStore.responseKey(team, earlierId)))));
      if (read.some((turn) => turn === null || turn.items === null)) return null;
      const found = read as StoredTurn[];
      for (let index = found.length - 1; index >= 0; index -= 1) turns.push(found[index] as StoredTurn);
      batch = (found[0] as StoredTurn).earlier;
    }
    const items: ResponseInputItem[] = [];
    for (let index = turns.length - 1; index >= 0; index -= 1) items.push(...((turns[index] as StoredTurn).items ?? []));
    return { session: newest.session, items, links };
  }

  /** An output item of one of the team's stored responses, in input form; null when unknown. */
  async findItem(team: string, id: string): Promise<ResponseInputItem | null> {
    const item = parse(await this.read(ResponseStore.itemKey(team, id)));
    return isObject(item) ? (item as unknown as ResponseInputItem) : null;
  }

  /**
   * Keeps a turn and its output items (those with an id), in one write within the team's budget.
   * A failed write, and a turn too big for the budget, are reported, not thrown.
   */
  async save(team: string, id: string, turn: StoredTurn, outputItems: readonly ResponseInputItem[]): Promise<void> {
    const entries = [{ key: ResponseStore.responseKey(team, id), value: JSON.stringify(turn) }];
    for (const item of outputItems) {
      if (typeof item.id === 'string' && item.id !== '') entries.push({ key: ResponseStore.itemKey(team, item.id), value: JSON.stringify(item) });
    }
    try {
      const outcome = await this.state.setWithinBudget(POOL, team, entries, this.retentionMs, {
        groupBytes: this.budget.teamBytes,
        totalBytes: this.budget.totalBytes,
      });
      if (!outcome.stored) {
        const bytes = entries.reduce((sum, entry) => sum + Buffer.byteLength(entry.key) + Buffer.byteLength(entry.value), 0);
        this.onError(
          new Error(
            `response ${id} takes ${bytes} bytes, more than responses.max_bytes_per_team or responses.max_bytes allows; it was answered but not stored`,
          ),
        );
      }
    } catch (error) {
      this.onError(error);
    }
  }

  /** A read that fails cannot be told from a response that does not exist: the caller must hear which. */
  private async read(key: string): Promise<string | null> {
    try {
      return await this.state.get(key);
    } catch (error) {
      throw new GatewayError('state_unavailable', 'Stored responses cannot be read right now (the shared state is unreachable); retry shortly.', {
        cause: error,
      });
    }
  }
}

function parseTurn(value: string | null): StoredTurn | null {
  const stored = parse(value);
  if (!isObject(stored)) return null;
  const { session, earlier, items } = stored;
  return {
    session: typeof session === 'string' ? session : null,
    earlier: Array.isArray(earlier) ? earlier.filter((link): link is string => typeof link === 'string') : [],
    items: Array.isArray(items) ? (items as ResponseInputItem[]) : null,
  };
}

function parse(value: string | null): unknown {
  if (value === null) return null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return null;
  }
}

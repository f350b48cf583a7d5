import type { Redis } from 'ioredis';
import { callListener } from './call-listener.js';
import { requireAmount, requireBudgetedEntries, requireCap, requireEntry, requireListener, requireMilliseconds, requireString } from './check-arguments.js';
import { ConnectionWatch, openConnections, redactRedisUrl, withoutPassword } from './redis-connections.js';
import {
  ADD_TO_WINDOW,
  BUDGET_USAGE,
  COMPARE_AND_SET,
  READ_FIELDS,
  SET_FIELD,
  SET_IF_ABSENT,
  SET_IF_ABSENT_CAPPED,
  SET_WITHIN_BUDGET,
  runScript,
} from './redis-scripts.js';
import { requireMeters } from './check-meters.js';
import { RedisMeters } from './redis-meters.js';
import type { BudgetedEntry, BudgetOutcome, BudgetUsage, ByteBudget, ChargeOutcome, KeyCap, Meter, SharedState, WindowCount } from './shared-state.js';

export interface RedisStateOptions {
  /** Put before every key and channel, so several deployments (or test runs) can share one Redis. */
  keyPrefix?: string;
  /** How long `open` waits for the first connection, and how long any connection attempt may take. */
  connectTimeoutMs?: number;
  /** How long a command waits for its reply before it rejects. */
  commandTimeoutMs?: number;
}

export const DEFAULT_KEY_PREFIX = 'switchyard:';
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** Long enough for any of these commands on a loaded server; short enough that a request can wait it out. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;

interface Subscription {
  readonly listener: (message: string) => void;
}

/**
 * Shared state in Redis (`state.url: redis://…` or `rediss://…`), seen alike by every gateway
 * process using it. Plain commands where one suffices (GET, SET PX, GETEX, PEXPIRE, PUBLISH) and
 * Lua scripts where an operation reads and then writes (see redis-scripts.ts). Messages travel on
 * a second connection, which SUBSCRIBE takes over; ioredis resubscribes it after a reconnection.
 *
 * While Redis is unreachable every operation rejects within about `commandTimeoutMs` rather than
 * waiting, both connections keep reconnecting in the background, and `onAvailability` listeners are
 * told when it goes and when it is back.
 */
export class RedisState implements SharedState {
  /** Connects, waiting up to `connectTimeoutMs` for the first connection; rejects naming the URL without its password. */
  static async open(url: string, options: RedisStateOptions = {}): Promise<RedisState> {
    const { keyPrefix = DEFAULT_KEY_PREFIX, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS, commandTimeoutMs = DEFAULT_COMMAND_TIMEOUT_MS } = options;
    requireString('keyPrefix', keyPrefix);
    requireMilliseconds('connectTimeoutMs', connectTimeoutMs);
    requireMilliseconds('commandTimeoutMs', commandTimeoutMs);
    const shownUrl = redactRedisUrl(url);
    // Not even the parser's error: it carries the URL it failed on.
    if (shownUrl === null) throw new Error('cannot reach Redis: the URL cannot be parsed');
    const state = new RedisState(url, keyPrefix, { connectTimeoutMs, commandTimeoutMs });
    if (await state.watch.waitUntilAvailable(connectTimeoutMs)) return state;
    const reason = state.watch.lastError?.message ?? `no connection within ${connectTimeoutMs} ms`;
    await state.close();
    throw new Error(`cannot reach Redis at ${shownUrl}: ${withoutPassword(reason, url)}`);
  }

  private readonly command: Redis;
  private readonly subscriber: Redis;
  private readonly watch: ConnectionWatch;
  private readonly meters: RedisMeters;
  /** Full channel name → this handle's listeners on it. */
  private readonly channels = new Map<string, Set<Subscription>>();
  /** Set by the first close; later calls share it. */
  private closing: Promise<void> | null = null;

  private constructor(
    url: string,
    private readonly prefix: string,
    settings: { connectTimeoutMs: number; commandTimeoutMs: number },
  ) {
    ({ command: this.command, subscriber: this.subscriber } = openConnections(url, settings));
    this.watch = new ConnectionWatch(this.command, this.subscriber);
    this.meters = new RedisMeters(this.command, (group) => `${prefix}meter-records:${group}`);
    this.subscriber.on('message', (channel: string, message: string) => this.deliver(channel, message));
  }

  async get(key: string): Promise<string | null> {
    this.requireOpen();
    requireString('key', key);
    return this.command.get(this.valueKey(key));
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.requireOpen();
    requireEntry(key, value, ttlMs);
    await this.command.set(this.valueKey(key), value, 'PX', ttlMs);
  }

  async delete(key: string): Promise<boolean> {
    this.requireOpen();
    requireString('key', key);
    return (await this.command.del(this.valueKey(key))) > 0;
  }

  async setIfAbsent(key: string, value: string, ttlMs: number, cap?: KeyCap): Promise<string> {
    this.requireOpen();
    requireEntry(key, value, ttlMs);
    requireCap(cap);
    if (cap === undefined) return stringReply(await runScript(this.command, SET_IF_ABSENT, [this.valueKey(key)], [value, ttlMs]));
    return stringReply(
      await runScript(this.command, SET_IF_ABSENT_CAPPED, [this.valueKey(key), `${this.prefix}index:${cap.index}`], [value, ttlMs, cap.limit]),
    );
  }

  async compareAndSet(key: string, expected: string | null, value: string, ttlMs: number): Promise<boolean> {
    this.requireOpen();
    requireEntry(key, value, ttlMs);
    if (expected !== null) requireString('expected', expected);
    const args = expected === null ? ['0', ''] : ['1', expected];
    return (await runScript(this.command, COMPARE_AND_SET, [this.valueKey(key)], [...args, value, ttlMs])) === 1;
  }

  async touch(key: string, ttlMs: number): Promise<boolean> {
    this.requireOpen();
    requireString('key', key);
    requireMilliseconds('ttlMs', ttlMs);
    return (await this.command.pexpire(this.valueKey(key), ttlMs)) === 1;
  }

  async getAndTouch(key: string, ttlMs: number): Promise<string | null> {
    this.requireOpen();
    requireString('key', key);
    requireMilliseconds('ttlMs', ttlMs);
    return this.command.getex(this.valueKey(key), 'PX', ttlMs);
  }

  async addToWindow(key: string, amount: number, windowMs: number): Promise<WindowCount> {
    this.requireOpen();
    requireString('key', key);
    requireAmount(amount);
    requireMilliseconds('windowMs', windowMs);
    // String(amount) is the shortest text that parses back to the same double, in Lua as in JS.
    const reply = stringsReply(await runScript(this.command, ADD_TO_WINDOW, [this.counterKey(key, windowMs)], [String(amount), windowMs]));
    const [windowStartMs, current, previous] = reply.map(Number);
    if (windowStartMs === undefined || current === undefined || previous === undefined) throw new Error('unexpected reply from Redis to addToWindow');
    return { current, previous, windowStartMs, windowMs };
  }

  async charge(meters: readonly Meter[]): Promise<ChargeOutcome> {
    this.requireOpen();
    requireMeters(meters);
    if (meters.length === 0) return { refused: -1, values: [], missing: [], rooms: [] };
    return this.meters.charge(meters);
  }

  async setWithinBudget(pool: string, group: string, entries: readonly BudgetedEntry[], ttlMs: number, budget: ByteBudget): Promise<BudgetOutcome> {
    this.requireOpen();
    requireBudgetedEntries(pool, group, entries, ttlMs, budget);
    const groupBase = this.budgetGroupBase(pool);
    const args = [groupBase, group, ttlMs, budget.groupBytes, budget.totalBytes, this.valueKey(''), ...entries.flatMap((entry) => [entry.key, entry.value])];
    const reply = await runScript(this.command, SET_WITHIN_BUDGET, [...this.budgetKeys(pool), groupBase + group], args);
    if (!Array.isArray(reply) || reply.length !== 2) throw new Error('unexpected reply from Redis to setWithinBudget');
    const [stored, evicted] = reply as [number, number];
    return { stored: stored === 1, evicted: Number(evicted) };
  }

  async budgetUsage(pool: string, group: string): Promise<BudgetUsage> {
    this.requireOpen();
    requireString('pool', pool);
    requireString('group', group);
    const [groupBytes, totalBytes] = stringsReply(await runScript(this.command, BUDGET_USAGE, this.budgetKeys(pool), [this.budgetGroupBase(pool), group])).map(
      Number,
    );
    if (groupBytes === undefined || totalBytes === undefined) throw new Error('unexpected reply from Redis to budgetUsage');
    return { groupBytes, totalBytes };
  }

  async setField(key: string, field: string, value: string, ttlMs: number): Promise<void> {
    this.requireOpen();
    requireString('key', key);
    requireString('field', field);
    requireString('value', value);
    requireMilliseconds('ttlMs', ttlMs);
    await runScript(this.command, SET_FIELD, this.fieldKeys(key), [field, value, ttlMs]);
  }

  async readFields(key: string): Promise<Record<string, string>> {
    this.requireOpen();
    requireString('key', key);
    const flat = stringsReply(await runScript(this.command, READ_FIELDS, this.fieldKeys(key), []));
    const entries: Array<[string, string]> = [];
    for (let index = 0; index + 1 < flat.length; index += 2) entries.push([flat[index] as string, flat[index + 1] as string]);
    // fromEntries defines own properties, so a field named "__proto__" is a field like any other.
    return Object.fromEntries(entries);
  }

  async publish(channel: string, message: string): Promise<void> {
    this.requireOpen();
    requireString('channel', channel);
    requireString('message', message);
    await this.command.publish(this.channelName(channel), message);
  }

  async subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>> {
    this.requireOpen();
    requireString('channel', channel);
    requireListener(listener);
    const name = this.channelName(channel);
    const subscription: Subscription = { listener };
    let subscriptions = this.channels.get(name);
    if (subscriptions === undefined) {
      subscriptions = new Set();
      this.channels.set(name, subscriptions);
    }
    subscriptions.add(subscription);
    try {
      // Sent even when the channel is already subscribed: its reply is what says this listener's
      // subscription is in place, and one connection's commands are answered in order.
      await this.subscriber.subscribe(name);
    } catch (error) {
      this.removeSubscription(name, subscription);
      throw error;
    }
    return async () => {
      if (!this.removeSubscription(name, subscription) || this.closing !== null) return;
      // The listener is gone already; telling the server is best effort. When it cannot be told,
      // ioredis resubscribes the channel on reconnection and its messages are dropped here.
      await this.subscriber.unsubscribe(name).catch(() => undefined);
    };
  }

  onAvailability(listener: (available: boolean) => void): () => void {
    this.requireOpen();
    requireListener(listener);
    return this.watch.onAvailability(listener);
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.watch.stop();
    this.channels.clear();
    await Promise.all([quit(this.command), quit(this.subscriber)]);
  }

  private deliver(name: string, message: string): void {
    const subscriptions = this.channels.get(name);
    if (subscriptions === undefined) return;
    // A listener may unsubscribe another one: that one is skipped from then on.
    for (const subscription of [...subscriptions]) if (subscriptions.has(subscription)) callListener(subscription.listener, message);
  }

  /** True when it was there and was the channel's last listener. */
  private removeSubscription(name: string, subscription: Subscription): boolean {
    const subscriptions = this.channels.get(name);
    if (subscriptions === undefined || !subscriptions.delete(subscription) || subscriptions.size > 0) return false;
    this.channels.delete(name);
    return true;
  }

  // Values, counters and maps have a namespace each, as the interface requires. A counter's window
  // length comes before its key: digits never contain the separator, so no two pairs collide.
  private valueKey(key: string): string {
    return `${this.prefix}value:${key}`;
  }

  private counterKey(key: string, windowMs: number): string {
    return `${this.prefix}window:${windowMs}:${key}`;
  }

  private fieldKeys(key: string): string[] {
    return [`${this.prefix}fields:${key}`, `${this.prefix}fields-expiry:${key}`];
  }

  /** A pool's name is length-prefixed, so that no pool's keys are another's. */
  private budgetKeys(pool: string): string[] {
    const base = `${this.prefix}budget:${pool.length}:${pool}:`;
    return [`${base}order`, `${base}entries`, `${base}bytes`, `${base}total`];
  }

  /** A group's sorted set is this and the group's name: the group comes last, so it cannot be mistaken for another. */
  private budgetGroupBase(pool: string): string {
    return `${this.prefix}budget:${pool.length}:${pool}:group:`;
  }

  private channelName(channel: string): string {
    return `${this.prefix}channel:${channel}`;
  }

  private requireOpen(): void {
    if (this.closing !== null) throw new Error('shared state is closed');
  }
}

/** QUIT when connected, so the server closes cleanly; otherwise just stop reconnecting. */
async function quit(connection: Redis): Promise<void> {
  if (connection.status === 'ready') {
    try {
      await connection.quit();
      return;
    } catch {
      // Lost while quitting: disconnect below stops any reconnection.
    }
  }
  connection.disconnect();
}

function stringReply(reply: unknown): string {
  if (typeof reply !== 'string') throw new Error(`unexpected reply from Redis: ${typeof reply}`);
  return reply;
}

function stringsReply(reply: unknown): string[] {
  const items: unknown[] = Array.isArray(reply) ? reply : [null];
  if (!items.every((item): item is string => typeof item === 'string')) throw new Error('unexpected reply from Redis: not a list of strings');
  return items;
}

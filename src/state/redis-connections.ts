import { Redis, type RedisOptions } from 'ioredis';
import { callListener } from './call-listener.js';

/** The longest pause between reconnection attempts, so the end of an outage is noticed within it. */
const MAX_RECONNECT_DELAY_MS = 2_000;

export interface ConnectionSettings {
  connectTimeoutMs: number;
  commandTimeoutMs: number;
}

/**
 * The two connections a RedisState needs: one for commands and one for SUBSCRIBE, which takes a
 * Redis connection over. Both fail fast and keep reconnecting in the background: a gateway must go
 * on deciding without shared state while Redis is away, not wait on it.
 */
export function openConnections(url: string, { connectTimeoutMs, commandTimeoutMs }: ConnectionSettings): { command: Redis; subscriber: Redis } {
  const options: RedisOptions = {
    connectionName: 'switchyard-state',
    // A command while disconnected rejects at once rather than waiting for a reconnection.
    enableOfflineQueue: false,
    // A command written but unanswered when the connection drops is rejected, never written again
    // after reconnecting: the server may have run it, and running addToWindow or compareAndSet twice
    // would count twice or report as lost a race that was won.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    // A connection that answers nothing at all for this long is dead even though its socket looks
    // open (a host gone without a reset); dropping it starts reconnection and onAvailability.
    socketTimeout: 2 * commandTimeoutMs,
    connectTimeout: connectTimeoutMs,
    keepAlive: 10_000,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, MAX_RECONNECT_DELAY_MS),
  };
  // Commands asked in the same turn of the event loop (the admissions and settlements of requests
  // that arrive or end together) leave in one write and are read by Redis in one read; each keeps
  // its place in the connection's order.
  const command = new Redis(url, { ...options, enableAutoPipelining: true });
  const subscriber = new Redis(url, { ...options, connectionName: 'switchyard-state-subscriber' });
  for (const connection of [command, subscriber]) clearSocketTimeoutOnClose(connection);
  return { command, subscriber };
}

/**
 * ioredis (5.x) keeps its `socketTimeout` timer on the client, not on the socket, and does not clear
 * it when the socket closes: after an outage in which commands went unanswered, the timer armed on
 * the dead socket fires on the reconnected one and drops it, about `socketTimeout` after the
 * outage began (a recovery undone moments later, and a second outage told). Cleared on close.
 */
function clearSocketTimeoutOnClose(connection: Redis): void {
  connection.on('close', () => {
    const internals = connection as unknown as { socketTimeoutTimer?: NodeJS.Timeout };
    clearTimeout(internals.socketTimeoutTimer);
    internals.socketTimeoutTimer = undefined;
  });
}

/**
 * Whether both connections are usable, and the listeners told when that changes. "Available" means
 * the command connection is ready and the subscriber's resubscriptions are in place, so `true` is
 * said only once commands work and messages flow again; `false` is said once, when the first of
 * them is lost, however many reconnection attempts fail after it.
 */
export class ConnectionWatch {
  /** What a connection last failed with, to say why a first connection never came. */
  lastError: Error | null = null;
  private commandReady = false;
  private subscriberReady = false;
  /** Bumped when the subscriber connection closes, so a PING answered on an older one counts for nothing. */
  private subscriberEpoch = 0;
  private available = false;
  private everAvailable = false;
  private stopped = false;
  private readonly listeners = new Set<{ listener: (available: boolean) => void }>();
  private readonly waiters = new Set<(available: boolean) => void>();

  constructor(command: Redis, subscriber: Redis) {
    for (const connection of [command, subscriber]) {
      // Handled here, ioredis would print every failed reconnection attempt to the console.
      connection.on('error', (error: Error) => {
        this.lastError = error;
      });
    }
    command.on('ready', () => {
      this.commandReady = true;
      this.update();
    });
    command.on('close', () => {
      this.commandReady = false;
      this.update();
      // The subscriber only listens, so a host that vanished without a reset would leave it open
      // and silent for good; when the command connection is found dead, start it afresh too.
      if (!this.stopped && subscriber.status === 'ready') subscriber.disconnect(true);
    });
    subscriber.on('ready', () => {
      const epoch = this.subscriberEpoch;
      // ioredis has just written the resubscriptions; a PING is answered after them.
      subscriber.ping().then(
        () => {
          if (epoch !== this.subscriberEpoch) return;
          this.subscriberReady = true;
          this.update();
        },
        // The connection was lost again: its close event says so.
        () => undefined,
      );
    });
    subscriber.on('close', () => {
      this.subscriberEpoch += 1;
      this.subscriberReady = false;
      this.update();
    });
  }

  /** True once both connections are available, false when `timeoutMs` passes (or stop is called) first. */
  waitUntilAvailable(timeoutMs: number): Promise<boolean> {
    if (this.available) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      const finish = (available: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(finish);
        resolve(available);
      };
      this.waiters.add(finish);
    });
  }

  onAvailability(listener: (available: boolean) => void): () => void {
    const entry = { listener };
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Closing: the connections' last events are not an outage. */
  stop(): void {
    this.stopped = true;
    this.listeners.clear();
    for (const finish of [...this.waiters]) finish(false);
  }

  private update(): void {
    const available = this.commandReady && this.subscriberReady;
    if (this.stopped || available === this.available) return;
    this.available = available;
    if (available) for (const finish of [...this.waiters]) finish(true);
    // The first change is the first connection, which is no news to anyone.
    if (!this.everAvailable) {
      this.everAvailable = true;
      return;
    }
    for (const { listener } of [...this.listeners]) callListener(listener, available);
  }
}

/**
 * The URL as it may be shown in an error message: its password, if any, replaced by `***`. Null
 * when it cannot be parsed, since then where a password starts is unknown.
 */
export function redactRedisUrl(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

/** A message with the URL's password, decoded or not, taken out wherever it appears. */
export function withoutPassword(message: string, url: string): string {
  let password: string;
  try {
    password = new URL(url).password;
  } catch {
    return message;
  }
  if (password === '') return message;
  let decoded = password;
  try {
    decoded = decodeURIComponent(password);
  } catch {
    // Not valid percent-encoding: ioredis would send it as written, which is already covered.
  }
  return message.split(password).join('***').split(decoded).join('***');
}

import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { plainAddress, type TrustedProxies } from '../core/index.js';
import type { Logger } from '../observability/logger.js';

export interface ConnectionLimits {
  /** Connections open at once (`server.max_connections`). */
  maxConnections: number;
  /** Connections one client address may hold at once (`server.max_connections_per_client`); 0: no share. */
  maxConnectionsPerClient: number;
  /** Addresses without a share (trusted reverse proxies, which carry many clients); asked only of an address at its share. */
  unshared?: Pick<TrustedProxies, 'trusts'>;
}

/** Kept-alive connections looked at, each time one arrives at the cap, for one with no request in flight. */
const RECLAIM_SCAN = 32;
/** Refusals and reclaims are logged at most this often: an attack must not flood the log. */
const REPORT_INTERVAL_MS = 60_000;

type ServedSocket = Socket & { _httpMessage?: object | null };

/**
 * Admits each new connection, before Node's HTTP server sets it up (docs/connections.md):
 *
 * - one client address holds at most its share; past it, the new connection is closed at once;
 * - at the total cap, an idle connection makes room before the new one is refused: first the
 *   oldest that never brought a whole request head (a socket that sends nothing, or a head that
 *   never ends), then a kept-alive one with no request in flight. So one host cannot hold the
 *   total, and many hosts cannot keep out a client with a request to make (`/health` included).
 *
 * Its cost is per connection (a count up and down, a set entry), never per request: whether a
 * connection is serving is read from Node's own state when room is needed.
 */
export function guardConnections(server: Server, limits: ConnectionLimits, logger: Logger): void {
  const perClient = new Map<string, number>();
  // Both in arrival order. `unserved` is swept lazily: a connection found serving moves to `served`.
  const unserved = new Set<ServedSocket>();
  const served = new Set<ServedSocket>();
  let open = 0;
  const report = reporter(logger, limits, () => open);

  const reclaim = (): boolean => {
    for (const socket of unserved) {
      unserved.delete(socket);
      if (isServing(socket) || socket.bytesWritten > 0) {
        served.add(socket);
        continue;
      }
      socket.destroy();
      return true;
    }
    let scanned = 0;
    for (const socket of served) {
      if (scanned++ === RECLAIM_SCAN) break;
      served.delete(socket);
      if (!isServing(socket)) {
        socket.destroy();
        return true;
      }
      // Busy: looked at again after the others.
      served.add(socket);
    }
    return false;
  };

  server.prependListener('connection', (socket: ServedSocket) => {
    const client = clientAddress(socket.remoteAddress);
    const held = perClient.get(client) ?? 0;
    if (limits.maxConnectionsPerClient > 0 && held >= limits.maxConnectionsPerClient && limits.unshared?.trusts(client) !== true) {
      socket.destroy();
      report.note('refusedOverShare', client);
      return;
    }
    if (open >= limits.maxConnections) {
      if (!reclaim()) {
        socket.destroy();
        report.note('refusedAtCap', client);
        return;
      }
      report.note('reclaimed', client);
    }
    open++;
    perClient.set(client, held + 1);
    unserved.add(socket);
    socket.once('close', () => {
      open--;
      const left = (perClient.get(client) ?? 1) - 1;
      if (left === 0) perClient.delete(client);
      else perClient.set(client, left);
      unserved.delete(socket);
      served.delete(socket);
    });
  });
}

type Outcome = 'refusedOverShare' | 'refusedAtCap' | 'reclaimed';

/**
 * Counts refusals and reclaims and logs them at `warn`: the first at once, then at most one line
 * per interval with what happened meanwhile, so that an attack cannot flood the log.
 */
function reporter(logger: Logger, limits: ConnectionLimits, open: () => number): { note(outcome: Outcome, client: string): void } {
  const counts: Record<Outcome, number> = { refusedOverShare: 0, refusedAtCap: 0, reclaimed: 0 };
  let lastClient = '';
  let reportedAt = Number.NEGATIVE_INFINITY;
  let pending: NodeJS.Timeout | null = null;
  const flush = (): void => {
    pending = null;
    reportedAt = Date.now();
    logger.warn(
      { ...counts, lastClient, open: open(), maxConnections: limits.maxConnections, maxConnectionsPerClient: limits.maxConnectionsPerClient },
      'client connections refused or reclaimed at the connection caps (server.max_connections, server.max_connections_per_client)',
    );
    counts.refusedOverShare = counts.refusedAtCap = counts.reclaimed = 0;
  };
  return {
    note: (outcome, client) => {
      counts[outcome]++;
      lastClient = client;
      if (pending !== null) return;
      const wait = reportedAt + REPORT_INTERVAL_MS - Date.now();
      if (wait <= 0) flush();
      else pending = setTimeout(flush, wait).unref();
    },
  };
}

/** Whether a response is under way on the connection: Node sets it from the request head to the response's end. */
function isServing(socket: ServedSocket): boolean {
  return socket._httpMessage !== null && socket._httpMessage !== undefined;
}

/** The address a connection is counted under: an IPv4-mapped IPv6 address is its IPv4 address. */
export function clientAddress(remoteAddress: string | undefined): string {
  return remoteAddress === undefined ? '' : plainAddress(remoteAddress);
}

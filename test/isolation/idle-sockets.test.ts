import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  keepIdleSockets,
  longestOpen,
  openFileLimit,
  openIdleSockets,
  pollBystander,
  startGatewayProcess,
  closedWithin,
  type GatewayProcess,
  type IdleSocket,
} from './support/idle-sockets.js';

// Issue 29, item 3: one unauthenticated host with 10,050 sockets that send nothing kept the gateway
// unreachable for as long as it liked. The gateway runs as a process of its own (its descriptors
// counted through /proc), the attackers use 127.0.0.2 and up, the bystander 127.0.0.1: Linux only.

/** Short, so that the suite sees every slot come back; the default is 10 s. */
const HEADER_TIMEOUT_MS = 2_000;
/**
 * Past the header timeout: the gateway checks the heads' deadlines every quarter of it (at most
 * every second); the rest is for two thousand 408s written at once, and their closes seen by this
 * process holding 10,050 sockets, on a shared two-core machine: the longest seen was 1.8 s past the
 * timeout on one host, and 3.1 to 4.0 s on one about twice as slow (2026-11-28: the bench's floor
 * at 170–200 µs a request instead of 88; the build before issue 32's changes measured the same
 * there). Before the fix: 60 to 90 s, and then half-open.
 */
const CLOSE_SLACK_MS = 5_000;
const PER_CLIENT_DEFAULT = 2_000;
const ATTACK_SOCKETS = 10_050;
/** The attacker's sockets live in this process: they, and the rest of the suite, must fit under its descriptor limit. */
const enoughDescriptors = openFileLimit() >= ATTACK_SOCKETS + 1_000;
if (process.platform === 'linux' && !enoughDescriptors) {
  process.stdout.write(`skipped: the 10,050 idle sockets case (ulimit -n is ${openFileLimit()}; it needs ${ATTACK_SOCKETS + 1_000})\n`);
}

describe.skipIf(process.platform !== 'linux')('idle sockets (issue 29, item 3)', () => {
  it.skipIf(!enoughDescriptors)(
    '10,050 idle sockets from one address: past its share they are refused, /health and a chat keep answering from another address, and every socket is closed fully within the header timeout',
    async () => {
      // server.max_connections and max_connections_per_client are left at their defaults (10,000, 2,000).
      const gateway = await startGatewayProcess({ header_timeout_ms: HEADER_TIMEOUT_MS });
      const sockets: IdleSocket[] = [];
      onTestFinished(async () => {
        for (const idle of sockets) idle.socket.destroy();
        await gateway.stop();
      });
      const baseline = await settledDescriptors(gateway);
      const bystander = pollBystander(gateway);
      const held = sampleDescriptors(gateway);

      const openingStarted = performance.now();
      sockets.push(...(await openIdleSockets(gateway.port, ATTACK_SOCKETS, ['127.0.0.2'])));
      // How long this machine took to open the attack, both processes busy with the same 10,050
      // sockets: the closes are seen as late again on a slow host (2026-11-28: 5.2 s past the
      // timeout on one four times slower than the 1.8 s one), and 60 s is still far out of reach.
      const openingMs = performance.now() - openingStarted;
      const allClosed = await closedWithin(sockets, HEADER_TIMEOUT_MS + CLOSE_SLACK_MS + openingMs);
      const outcomes = await bystander.stop();
      const mostHeld = held.stop() - baseline;

      expect(sockets.filter((idle) => idle.openedAt === null)).toHaveLength(0);
      expect(outcomes.filter((outcome) => outcome.result !== 200)).toEqual([]);
      expect(outcomes.length).toBeGreaterThanOrEqual(20);
      expect(allClosed).toBe(true);
      expect(longestOpen(sockets)).toBeLessThan(HEADER_TIMEOUT_MS + CLOSE_SLACK_MS + openingMs);
      // The gateway never held more of them than the address's share (its own few sockets aside).
      expect(mostHeld).toBeLessThanOrEqual(PER_CLIENT_DEFAULT + 10);
      // Those it took were answered 408 when their head did not come.
      expect(sockets.filter((idle) => idle.received.startsWith('HTTP/1.1 408 ')).length).toBeGreaterThanOrEqual(PER_CLIENT_DEFAULT);
      // Closed fully, though the clients never closed their side: the gateway holds no socket of theirs.
      expect(await settledDescriptors(gateway)).toBeLessThanOrEqual(baseline + 2);
    },
    40_000,
  );

  it('idle sockets from five addresses that keep the total cap full: /health and a chat keep answering (the oldest idle socket makes room), and every socket is closed within the header timeout', async () => {
    // 5 × 50 attackers against a total of 200; a header timeout longer than the attack, so that only
    // reclaiming idle sockets can let the bystander in while it lasts.
    const headerTimeoutMs = 4_000;
    const gateway = await startGatewayProcess({ header_timeout_ms: headerTimeoutMs, max_connections: 200, max_connections_per_client: 50 });
    onTestFinished(() => gateway.stop());
    const baseline = await settledDescriptors(gateway);
    const addresses = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];
    const attack = keepIdleSockets(gateway.port, 50, addresses, 100);
    onTestFinished(() => {
      attack.stop();
      for (const idle of attack.sockets) idle.socket.destroy();
    });
    await attack.opened;
    const held = sampleDescriptors(gateway);
    const bystander = pollBystander(gateway);
    await sleep(3_000);
    const outcomes = await bystander.stop();
    attack.stop();
    const mostHeld = held.stop() - baseline;
    const allClosed = await closedWithin(attack.sockets, headerTimeoutMs + 3_000);

    expect(outcomes.filter((outcome) => outcome.result !== 200)).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(20);
    expect(mostHeld).toBeLessThanOrEqual(200 + 10);
    expect(allClosed).toBe(true);
    expect(longestOpen(attack.sockets)).toBeLessThan(headerTimeoutMs + CLOSE_SLACK_MS);
    expect(await settledDescriptors(gateway)).toBeLessThanOrEqual(baseline + 2);
  }, 40_000);
});

/** The gateway's descriptors once it has served a request and settled (its upstream connection kept alive). */
async function settledDescriptors(gateway: GatewayProcess): Promise<number> {
  const warmup = pollBystander(gateway);
  await sleep(100);
  await warmup.stop();
  await sleep(200);
  return gateway.openDescriptors();
}

/** Samples the gateway's descriptors every 50 ms; `stop` returns the most seen. */
function sampleDescriptors(gateway: GatewayProcess): { stop(): number } {
  let most = gateway.openDescriptors();
  const timer = setInterval(() => (most = Math.max(most, gateway.openDescriptors())), 50);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(most, gateway.openDescriptors());
    },
  };
}

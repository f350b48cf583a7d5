import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { TrustedProxies } from '../core/index.js';
import { createLogger } from '../observability/logger.js';
import { clientAddress, guardConnections } from './connection-guard.js';

describe('clientAddress', () => {
  it('counts an IPv4-mapped IPv6 address as its IPv4 address, and any other address as it is', () => {
    expect(clientAddress('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(clientAddress('10.1.2.3')).toBe('10.1.2.3');
    expect(clientAddress('::1')).toBe('::1');
    expect(clientAddress('2001:db8::7')).toBe('2001:db8::7');
    expect(clientAddress(undefined)).toBe('');
  });
});

describe('guardConnections', () => {
  let server: Server | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('logs the first refusal at once and folds the next ones into a later line, so that an attack cannot flood the log', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    server = createServer((_request, response) => response.end('ok'));
    guardConnections(server, { maxConnections: 100, maxConnectionsPerClient: 1 }, createLogger('info', sink));
    const port = await new Promise<number>((resolve) => server?.listen(0, '127.0.0.1', () => resolve((server?.address() as { port: number }).port)));

    const held = await open(port);
    const refused = await Promise.all([open(port), open(port), open(port)]);
    await Promise.all(refused.map((socket) => new Promise((resolve) => (socket.destroyed ? resolve(undefined) : socket.once('close', resolve)))));
    sockets.push(held, ...refused);
    // pino writes asynchronously.
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(held.destroyed).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, refusedOverShare: 1, refusedAtCap: 0, reclaimed: 0, lastClient: '127.0.0.1', maxConnectionsPerClient: 1 });
  });

  it('gives a trusted proxy no share: it carries many clients, and the total cap still holds', async () => {
    server = createServer((_request, response) => response.end('ok'));
    guardConnections(server, { maxConnections: 3, maxConnectionsPerClient: 1, unshared: TrustedProxies.parse(['127.0.0.1']) }, createLogger('silent'));
    const port = await new Promise<number>((resolve) => server?.listen(0, '127.0.0.1', () => resolve((server?.address() as { port: number }).port)));
    const held = await Promise.all([open(port), open(port), open(port)]);
    sockets.push(...held);
    // Past the share and alive: each one answers.
    for (const socket of held) {
      const answer = await new Promise<string>((resolve) => {
        socket.once('data', (data: Buffer) => resolve(data.toString('latin1')));
        socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
    }
    // At the total, with every connection serving none: the oldest idle one makes room.
    const fourth = await open(port);
    sockets.push(fourth);
    await new Promise((resolve) => (held[0]?.destroyed === true ? resolve(undefined) : held[0]?.once('close', resolve)));
    expect(fourth.destroyed).toBe(false);
  });
});

function open(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.on('error', () => undefined);
  });
}

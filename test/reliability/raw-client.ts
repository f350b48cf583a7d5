import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the gateway closed the connection after answering. */
  closed: boolean;
}

/**
 * A socket to the gateway, for requests no well-behaved client would send; `localAddress` chooses
 * the client address (127.0.0.2 and up are loopback too), `allowHalfOpen` keeps it from closing its
 * side when the gateway closes its own.
 */
export function openSocket(url: string, options: { localAddress?: string; allowHalfOpen?: boolean } = {}): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ...options }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Writes `parts` (strings sent as they are, numbers as pauses in ms) and reads one answer: until the
 * connection closes, or `waitMs` after the last byte. Chunked answers are returned as they came.
 */
export async function rawExchange(url: string, parts: Array<string | number>, waitMs = 300): Promise<RawAnswer> {
  const socket = await openSocket(url);
  const received: Buffer[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  for (const part of parts) {
    if (typeof part === 'number') await new Promise((resolve) => setTimeout(resolve, part));
    else if (!socket.destroyed) socket.write(part);
  }
  await Promise.race([ended, waitForQuiet(received, waitMs)]);
  socket.destroy();
  return { ...parseAnswer(Buffer.concat(received).toString('utf8')), closed };
}

/** Resolves once something arrived and nothing more came for `waitMs` (or after 5 s). */
async function waitForQuiet(received: Buffer[], waitMs: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  let seen = -1;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    if (received.length > 0 && received.length === seen) return;
    seen = received.length;
  }
}

export function parseAnswer(text: string): Omit<RawAnswer, 'closed'> {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return { status: 0, headers: {}, body: text };
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) };
}

/** A POST request's head, with the token and the body's length. */
export function postHead(path: string, token: string, bodyLength: number, extraHeaders: Record<string, string> = {}): string {
  const headers = {
    host: 'gateway',
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'content-length': String(bodyLength),
    ...extraHeaders,
  };
  return `POST ${path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n')}\r\n\r\n`;
}

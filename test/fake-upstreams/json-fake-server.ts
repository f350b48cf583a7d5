import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedJsonRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
}

export interface FakeFailure {
  status: number;
  /** An object is sent as JSON, a string as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface JsonFakeServer {
  /** `http://127.0.0.1:PORT`, without a path. */
  readonly url: string;
  readonly requests: RecordedJsonRequest[];
  failNext(failure: FakeFailure, times?: number): void;
  close(): Promise<void>;
}

/** Answers one recorded request; `route` is `METHOD /path`. */
export type JsonFakeRoute = (route: string, body: unknown, response: ServerResponse) => void;

/**
 * The plumbing every JSON vendor fake shares: record each request before answering it, let queued
 * `failNext` answers win over everything, and hand the rest to the vendor's own `answer`.
 */
export async function startJsonFakeServer(answer: JsonFakeRoute, defaultFailureBody: unknown): Promise<JsonFakeServer> {
  const requests: RecordedJsonRequest[] = [];
  const failures: Array<{ failure: FakeFailure; remaining: number }> = [];
  const server = createServer((request, response) => {
    void readBody(request).then((raw) => {
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // Recorded as text; the vendor's answer refuses it.
      }
      requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
      const pending = failures[0];
      if (pending !== undefined) {
        if (--pending.remaining <= 0) failures.shift();
        sendJson(response, pending.failure.status, pending.failure.body ?? defaultFailureBody, pending.failure.headers);
        return;
      }
      answer(`${request.method} ${request.url}`, body, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext(failure, times = 1) {
      failures.push({ failure, remaining: times });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(typeof body === 'string' ? body : JSON.stringify(body));
}

export function readJsonFixture(directory: URL, name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, directory), 'utf8')) as Record<string, unknown>;
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

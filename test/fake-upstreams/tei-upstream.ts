// A fake Hugging Face text-embeddings-inference server (`/embed`, `/rerank`) for the gateway's tests.
//
// It speaks TEI's native protocol as recorded in test/fixtures/tei (see test/fixtures/README.md):
// `/embed` answers a bare array of vectors in input order (strings or token-id arrays in, one
// vector each that encodes the input, `fakeEmbedding`) and refuses more inputs than
// `--max-client-batch-size` (32 by default) with TEI's 413 body; `/rerank` answers a bare array
// of `{index, score}` sorted by score, every text scored (TEI has no top_n), `text` only with
// `return_text`. Neither reports usage. Every request is recorded first; queued `failNext`
// answers win over everything. Only node:http is used.

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeEmbedding, fakeRelevance } from './openai-upstream.js';

export interface RecordedTeiRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface TeiFailure {
  status: number;
  /** An object is sent as JSON, a string as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeTeiUpstream {
  readonly url: string;
  readonly requests: RecordedTeiRequest[];
  failNext(failure: TeiFailure, times?: number): void;
  close(): Promise<void>;
}

type JsonObject = Record<string, unknown>;

const FIXTURES = new URL('../fixtures/tei/', import.meta.url);
/** TEI's default `--max-client-batch-size`. */
export const TEI_MAX_CLIENT_BATCH_SIZE = 32;

/** The vector the fake returns for an input, at `dimensions` (8 unless `dimensions` was sent). */
export function fakeTeiEmbedding(input: string | number[], dimensions = 8): number[] {
  return fakeEmbedding(input, dimensions);
}

export async function startFakeTeiUpstream(): Promise<FakeTeiUpstream> {
  // The recorded 413 body is TEI's wording for an oversized batch; the numbers are filled in per request.
  const batchError = readJson('errors/413-batch-size.json');
  const requests: RecordedTeiRequest[] = [];
  const failures: Array<{ failure: TeiFailure; remaining: number }> = [];

  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // Recorded as text; Cohere would refuse it below.
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const pending = failures[0];
      if (pending !== undefined) {
        if (--pending.remaining <= 0) failures.shift();
        send(res, pending.failure.status, pending.failure.body ?? { error: 'failure', error_type: 'Backend' }, pending.failure.headers);
        return;
      }
      const route = `${req.method} ${req.url}`;
      if (route === 'POST /embed') answerEmbed(res, body, batchError);
      else if (route === 'POST /rerank') answerRerank(res, body);
      else send(res, 404, '');
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

function answerEmbed(res: ServerResponse, body: unknown, batchError: JsonObject): void {
  const raw = isObject(body) ? body.inputs : undefined;
  const inputs = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? (raw as Array<string | number[]>) : [];
  if (inputs.length === 0) {
    send(res, 413, { error: 'Input validation error: `inputs` cannot be empty', error_type: 'Validation' });
    return;
  }
  if (inputs.length > TEI_MAX_CLIENT_BATCH_SIZE) {
    const error = String(batchError.error).replace(/\d+ > maximum allowed batch size \d+/, `${inputs.length} > maximum allowed batch size ${TEI_MAX_CLIENT_BATCH_SIZE}`);
    send(res, 413, { ...batchError, error });
    return;
  }
  const dimensions = isObject(body) && typeof body.dimensions === 'number' ? body.dimensions : 8;
  send(res, 200, inputs.map((input) => fakeTeiEmbedding(input, dimensions)));
}

function answerRerank(res: ServerResponse, body: unknown): void {
  if (!isObject(body) || typeof body.query !== 'string' || !Array.isArray(body.texts) || body.texts.length === 0) {
    send(res, 413, { error: 'Input validation error: `texts` cannot be empty', error_type: 'Validation' });
    return;
  }
  const query = body.query;
  const returnText = body.return_text === true;
  const ranks = body.texts
    .map(String)
    .map((text, index) => ({ index, ...(returnText ? { text } : {}), score: fakeRelevance(query, text) }))
    .sort((left, right) => right.score - left.score);
  send(res, 200, ranks);
}

function readJson(name: string): JsonObject {
  return JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as JsonObject;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

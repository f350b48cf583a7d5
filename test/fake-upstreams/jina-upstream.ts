// A fake Jina AI API (`/v1/embeddings` and `/v1/rerank`) for the gateway's tests.
//
// It answers in Jina's recorded envelopes (test/fixtures/jina, see test/fixtures/README.md):
// embeddings keep the recorded `model`/`object`/`usage`/`data[{object, index, embedding}]`
// shape with one vector per input that encodes the input (`fakeEmbedding`); rerank answers
// results sorted by relevance, cut to `top_n`, with `usage.total_tokens`, and the document text
// only when `return_documents` is not false. Errors are FastAPI-style `{"detail": …}`. Every
// request is recorded first; queued `failNext` answers win over everything. Only node:http is used.

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeEmbedding, fakeRelevance } from './openai-upstream.js';

export interface RecordedJinaRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface JinaFailure {
  status: number;
  /** An object is sent as JSON, a string as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeJinaUpstream {
  readonly url: string;
  readonly requests: RecordedJinaRequest[];
  failNext(failure: JinaFailure, times?: number): void;
  close(): Promise<void>;
}

type JsonObject = Record<string, unknown>;

const FIXTURES = new URL('../fixtures/jina/', import.meta.url);
/** The vector the fake returns for a text, at `dimensions` (8 unless `dimensions` was sent). */
export function fakeJinaEmbedding(text: string, dimensions = 8): number[] {
  return fakeEmbedding(text, dimensions);
}

/** Tokens the fake reports for some texts: ⌈length / 4⌉ each. */
export function fakeJinaTokens(texts: readonly string[]): number {
  return texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
}

export async function startFakeJinaUpstream(): Promise<FakeJinaUpstream> {
  const embedFixture = readJson('embeddings.json');
  const rerankFixture = readJson('rerank.json');
  const requests: RecordedJinaRequest[] = [];
  const failures: Array<{ failure: JinaFailure; remaining: number }> = [];

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
        send(res, pending.failure.status, pending.failure.body ?? { detail: 'failure' }, pending.failure.headers);
        return;
      }
      const route = `${req.method} ${req.url}`;
      if (route === 'POST /v1/embeddings') answerEmbeddings(res, body, embedFixture);
      else if (route === 'POST /v1/rerank') answerRerank(res, body, rerankFixture);
      else send(res, 404, { detail: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext(failure, times = 1) {
      failures.push({ failure, remaining: times });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function answerEmbeddings(res: ServerResponse, body: unknown, fixture: JsonObject): void {
  if (!isObject(body) || !Array.isArray(body.input) || !body.input.every((text) => typeof text === 'string')) {
    send(res, 422, { detail: [{ type: 'missing', loc: ['body', 'input'], msg: 'Field required' }] });
    return;
  }
  const texts = body.input as string[];
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : 8;
  const tokens = fakeJinaTokens(texts);
  const response = structuredClone(fixture);
  response.model = typeof body.model === 'string' ? body.model : response.model;
  response.usage = { total_tokens: tokens, prompt_tokens: tokens };
  response.data = texts.map((text, index) => ({ object: 'embedding', index, embedding: fakeJinaEmbedding(text, dimensions) }));
  send(res, 200, response);
}

function answerRerank(res: ServerResponse, body: unknown, fixture: JsonObject): void {
  if (!isObject(body) || typeof body.query !== 'string' || !Array.isArray(body.documents)) {
    send(res, 422, { detail: [{ type: 'missing', loc: ['body', 'query'], msg: 'Field required' }] });
    return;
  }
  const query = body.query;
  const documents = body.documents.map(String);
  const withDocuments = body.return_documents !== false;
  const results = documents
    .map((document, index) => ({ index, ...(withDocuments ? { document: { text: document } } : {}), relevance_score: fakeRelevance(query, document) }))
    .sort((left, right) => right.relevance_score - left.relevance_score);
  const response = structuredClone(fixture);
  response.model = typeof body.model === 'string' ? body.model : response.model;
  response.usage = { total_tokens: fakeJinaTokens([query, ...documents]) };
  response.results = typeof body.top_n === 'number' ? results.slice(0, body.top_n) : results;
  send(res, 200, response);
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

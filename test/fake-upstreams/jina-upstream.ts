// A fake Jina AI API (`/v1/embeddings` and `/v1/rerank`) for the gateway's tests.
//
// It answers in Jina's recorded envelopes (test/fixtures/jina, see test/fixtures/README.md):
// embeddings keep the recorded `model`/`object`/`usage`/`data[{object, index, embedding}]`
// shape with one vector per input that encodes the input (`fakeEmbedding`); rerank answers
// results sorted by relevance, cut to `top_n`, with `usage.total_tokens`, and the document text
// only when `return_documents` is not false. Errors are FastAPI-style `{"detail": …}`. Every
// request is recorded first; queued `failNext` answers win over everything. Only node:http is used.

import type { ServerResponse } from 'node:http';
import {
  isJsonObject as isObject,
  readJsonFixture,
  sendJson as send,
  startJsonFakeServer,
  type FakeFailure,
  type JsonFakeServer,
  type RecordedJsonRequest,
} from './json-fake-server.js';
import { fakeEmbedding, fakeRelevance } from './openai-upstream.js';

export type RecordedJinaRequest = RecordedJsonRequest;

export type JinaFailure = FakeFailure;

export type FakeJinaUpstream = JsonFakeServer;

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
  const server = await startJsonFakeServer(
    (route, body, res) => {
      if (route === 'POST /v1/embeddings') answerEmbeddings(res, body, embedFixture);
      else if (route === 'POST /v1/rerank') answerRerank(res, body, rerankFixture);
      else send(res, 404, { detail: 'Not Found' });
    },
    { detail: 'failure' },
  );
  // Jina's base URL carries its version: `https://api.jina.ai/v1`.
  return { ...server, url: `${server.url}/v1`, failNext: server.failNext, close: server.close };
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
  return readJsonFixture(FIXTURES, name);
}

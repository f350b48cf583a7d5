// A fake Cohere API (v2 embed and rerank) for the gateway's tests.
//
// It answers in Cohere's recorded envelopes (test/fixtures/cohere, see test/fixtures/README.md):
// `POST /v2/embed` keeps the recorded `id`/`texts`/`embeddings.float`/`meta.billed_units`
// shape with one vector per text that encodes the text (`fakeEmbedding`), and refuses more than
// 96 texts the way Cohere does; `POST /v2/rerank` answers results sorted by relevance, cut to
// `top_n`, billed in search units with no token count, as Cohere does. Every request is
// recorded first; queued `failNext` answers win over everything. Only node:http is used.

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

export type RecordedCohereRequest = RecordedJsonRequest;

export type CohereFailure = FakeFailure;

export type FakeCohereUpstream = JsonFakeServer;

type JsonObject = Record<string, unknown>;

const FIXTURES = new URL('../fixtures/cohere/', import.meta.url);
/** Cohere's documented cap on `texts` per call. */
export const COHERE_MAX_TEXTS = 96;

/** The vector the fake returns for a text, at `dimensions` (8 unless `output_dimension` was sent). */
export function fakeCohereEmbedding(text: string, dimensions = 8): number[] {
  return fakeEmbedding(text, dimensions);
}

/** Billed input tokens the fake reports for some texts: ⌈length / 4⌉ each. */
export function fakeCohereInputTokens(texts: readonly string[]): number {
  return texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
}

export async function startFakeCohereUpstream(): Promise<FakeCohereUpstream> {
  const embedFixture = readJson('embed.json');
  const rerankFixture = readJson('rerank.json');
  return startJsonFakeServer(
    (route, body, res) => {
      if (route === 'POST /v2/embed') answerEmbed(res, body, embedFixture);
      else if (route === 'POST /v2/rerank') answerRerank(res, body, rerankFixture);
      else send(res, 404, { message: `route not found: ${route}` });
    },
    { message: 'failure' },
  );
}

function answerEmbed(res: ServerResponse, body: unknown, fixture: JsonObject): void {
  if (!isObject(body) || !Array.isArray(body.texts) || !body.texts.every((text) => typeof text === 'string')) {
    send(res, 400, { message: 'invalid request: texts must be a list of strings' });
    return;
  }
  if (body.texts.length > COHERE_MAX_TEXTS) {
    send(res, 400, { message: `invalid request: texts must have at most ${COHERE_MAX_TEXTS} elements, but got ${body.texts.length}` });
    return;
  }
  const texts = body.texts as string[];
  const dimensions = typeof body.output_dimension === 'number' ? body.output_dimension : 8;
  const response = structuredClone(fixture);
  response.texts = texts;
  response.embeddings = { float: texts.map((text) => fakeCohereEmbedding(text, dimensions)) };
  response.meta = { ...(fixture.meta as JsonObject), billed_units: { input_tokens: fakeCohereInputTokens(texts) } };
  send(res, 200, response);
}

function answerRerank(res: ServerResponse, body: unknown, fixture: JsonObject): void {
  if (!isObject(body) || typeof body.query !== 'string' || !Array.isArray(body.documents)) {
    send(res, 400, { message: 'invalid request: query and documents are required' });
    return;
  }
  const query = body.query;
  const results = body.documents
    .map((document, index) => ({ index, relevance_score: fakeRelevance(query, String(document)) }))
    .sort((left, right) => right.relevance_score - left.relevance_score);
  const response = structuredClone(fixture);
  response.results = typeof body.top_n === 'number' ? results.slice(0, body.top_n) : results;
  send(res, 200, response);
}

function readJson(name: string): JsonObject {
  return readJsonFixture(FIXTURES, name);
}

// A fake Hugging Face text-embeddings-inference server (`/embed`, `/rerank`) for the gateway's tests.
//
// It speaks TEI's native protocol as recorded in test/fixtures/tei (see test/fixtures/README.md):
// `/embed` answers a bare array of vectors in input order (strings or token-id arrays in, one
// vector each that encodes the input, `fakeEmbedding`) and refuses more inputs than
// `--max-client-batch-size` (32 by default) with TEI's 413 body; `/rerank` answers a bare array
// of `{index, score}` sorted by score, every text scored (TEI has no top_n), `text` only with
// `return_text`. Neither reports usage. Every request is recorded first; queued `failNext`
// answers win over everything. Only node:http is used.

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

export type RecordedTeiRequest = RecordedJsonRequest;

export type TeiFailure = FakeFailure;

export type FakeTeiUpstream = JsonFakeServer;

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
  return startJsonFakeServer(
    (route, body, res) => {
      if (route === 'POST /embed') answerEmbed(res, body, batchError);
      else if (route === 'POST /rerank') answerRerank(res, body);
      else send(res, 404, '');
    },
    { error: 'failure', error_type: 'Backend' },
  );
}

function answerEmbed(res: ServerResponse, body: unknown, batchError: JsonObject): void {
  const raw = isObject(body) ? body.inputs : undefined;
  const inputs = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? (raw as Array<string | number[]>) : [];
  if (inputs.length === 0) {
    send(res, 413, { error: 'Input validation error: `inputs` cannot be empty', error_type: 'Validation' });
    return;
  }
  if (inputs.length > TEI_MAX_CLIENT_BATCH_SIZE) {
    const error = String(batchError.error).replace(
      /\d+ > maximum allowed batch size \d+/,
      `${inputs.length} > maximum allowed batch size ${TEI_MAX_CLIENT_BATCH_SIZE}`,
    );
    send(res, 413, { ...batchError, error });
    return;
  }
  const dimensions = isObject(body) && typeof body.dimensions === 'number' ? body.dimensions : 8;
  send(
    res,
    200,
    inputs.map((input) => fakeTeiEmbedding(input, dimensions)),
  );
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
  return readJsonFixture(FIXTURES, name);
}

import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { COHERE_MAX_TEXTS, fakeCohereEmbedding, fakeCohereInputTokens, startFakeCohereUpstream } from '../fake-upstreams/cohere-upstream.js';
import { fakeJinaEmbedding, fakeJinaTokens, startFakeJinaUpstream } from '../fake-upstreams/jina-upstream.js';
import type { FakeFailure, JsonFakeServer } from '../fake-upstreams/json-fake-server.js';
import { fakeTeiEmbedding, startFakeTeiUpstream, TEI_MAX_CLIENT_BATCH_SIZE } from '../fake-upstreams/tei-upstream.js';

/** One upstream failure and what the SDK must see of it. */
export interface ErrorCase {
  failure: FakeFailure;
  /** Which of the row's models is asked. */
  call: 'embed' | 'rerank';
  errorClass?: typeof OpenAI.APIError | typeof OpenAI.RateLimitError | typeof OpenAI.BadRequestError;
  status?: number;
  code: string;
  message?: string;
  retryAfter?: string;
}

/** What differs between the embedding and rerank providers; the suite asks every row the same questions. */
export interface EmbedRerankProvider {
  name: string;
  start(): Promise<JsonFakeServer>;
  document(url: string): { upstreams: unknown[]; models: unknown[] };
  embedModel: string;
  rerankModel: string;
  embedding(input: string | number[], dimensions?: number): number[];
  /** The upstream's own token count of inputs, reported as usage; undefined when the gateway counts. */
  inputTokens?: (inputs: readonly string[]) => number;
  embedRequest: { title: string; path: string; authorization: string; body(inputs: string[]): unknown };
  dimensions: { title: string; count: number; body: Record<string, unknown>; exact: boolean };
  /** Token-id inputs: refused before the upstream, or passed through. */
  tokenArrays: 'refused' | 'passed';
  batching: { title: string; model: string; inputs: string[]; batches: string[][]; authorization: string; inputField: string };
  rerankRequest: {
    title: string;
    path: string;
    authorization: string | undefined;
    body(query: string, documents: string[]): unknown;
    usage(query: string, documents: string[]): unknown;
  };
  topN: { title: string; body: Record<string, unknown> | 'absent' };
  errors: Array<{ title: string; cases: ErrorCase[] }>;
}

const fixture = (provider: string, name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../fixtures/${provider}/${name}`, import.meta.url), 'utf8')) as unknown;

/** `count` inputs of varied lengths (a run of `pad`, up to `spread` long, before each). */
const numberedInputs = (count: number, pad: string, spread: number): string[] =>
  Array.from({ length: count }, (_, index) => `${pad.repeat(index % spread)}input ${index}`);

const cohereBatch = numberedInputs(COHERE_MAX_TEXTS + 1, 'x', 7);
const teiBatch = numberedInputs(TEI_MAX_CLIENT_BATCH_SIZE + 1, 'y', 5);

export const EMBED_RERANK_PROVIDERS: EmbedRerankProvider[] = [
  {
    name: 'Cohere',
    start: startFakeCohereUpstream,
    document: (url) => ({
      upstreams: [{ id: 'cohere-a', provider: 'cohere', base_url: url, api_key: 'co-test-key' }],
      models: [
        { id: 'cohere-embed', type: 'embedding', owned_by: 'cohere', routes: [{ upstream: 'cohere-a', model: 'embed-v4.0' }] },
        { id: 'cohere-rerank', type: 'rerank', owned_by: 'cohere', routes: [{ upstream: 'cohere-a', model: 'rerank-v3.5' }] },
      ],
    }),
    embedModel: 'cohere-embed',
    rerankModel: 'cohere-rerank',
    embedding: (input, dimensions) => fakeCohereEmbedding(input as string, dimensions),
    inputTokens: fakeCohereInputTokens,
    embedRequest: {
      title: 'with Cohere billed tokens as usage',
      path: '/v2/embed',
      authorization: 'Bearer co-test-key',
      body: (inputs) => ({ model: 'embed-v4.0', texts: inputs, input_type: 'search_document', embedding_types: ['float'] }),
    },
    dimensions: {
      title: 'floats from Cohere), and sends output_dimension',
      count: 4,
      body: { texts: ['hello world'], embedding_types: ['float'], output_dimension: 4 },
      exact: false,
    },
    tokenArrays: 'refused',
    batching: {
      title: `more than ${COHERE_MAX_TEXTS} inputs into batches Cohere accepts`,
      model: 'cohere-embed',
      inputs: cohereBatch,
      batches: [cohereBatch.slice(0, COHERE_MAX_TEXTS), cohereBatch.slice(COHERE_MAX_TEXTS)],
      authorization: 'Bearer co-test-key',
      inputField: 'texts',
    },
    rerankRequest: {
      // Cohere bills rerank in search units, not tokens: the gateway does not invent a token count.
      title: 'and reports no token usage',
      path: '/v2/rerank',
      authorization: 'Bearer co-test-key',
      body: (query, documents) => ({ model: 'rerank-v3.5', query, documents }),
      usage: () => undefined,
    },
    topN: { title: 'passes top_n to Cohere and returns that many, with the documents when asked', body: { top_n: 2 } },
    errors: [
      {
        title: '429 with the upstream Retry-After',
        cases: [
          {
            failure: { status: 429, body: fixture('cohere', 'errors/429-trial-key-limit.json'), headers: { 'retry-after': '7' } },
            call: 'embed',
            errorClass: OpenAI.RateLimitError,
            code: 'upstream_rate_limited',
            retryAfter: '7',
          },
        ],
      },
      {
        title: '401 from Cohere is 502 upstream_auth_failed',
        cases: [
          {
            failure: { status: 401, body: fixture('cohere', 'errors/401-invalid-api-token.json') },
            call: 'rerank',
            errorClass: OpenAI.APIError,
            status: 502,
            code: 'upstream_auth_failed',
          },
        ],
      },
      {
        title: '400 from Cohere is 400 upstream_bad_request with Cohere message',
        cases: [
          {
            failure: { status: 400, body: fixture('cohere', 'errors/400-invalid-request.json') },
            call: 'embed',
            errorClass: OpenAI.BadRequestError,
            code: 'upstream_bad_request',
            message: 'invalid request',
          },
        ],
      },
    ],
  },
  {
    name: 'Jina',
    start: startFakeJinaUpstream,
    document: (url) => ({
      upstreams: [
        { id: 'jina-a', provider: 'jina', base_url: url, api_key: 'jina_test_key' },
        // The same fake, taking at most two inputs per call, to prove batching.
        { id: 'jina-small', provider: 'jina', base_url: url, api_key: 'jina_small_key', max_embedding_inputs: 2 },
      ],
      models: [
        { id: 'jina-embed', type: 'embedding', owned_by: 'jina', routes: [{ upstream: 'jina-a', model: 'jina-embeddings-v3' }] },
        { id: 'jina-embed-small', type: 'embedding', routes: [{ upstream: 'jina-small', model: 'jina-embeddings-v3' }] },
        { id: 'jina-rerank', type: 'rerank', owned_by: 'jina', routes: [{ upstream: 'jina-a', model: 'jina-reranker-v2-base-multilingual' }] },
      ],
    }),
    embedModel: 'jina-embed',
    rerankModel: 'jina-rerank',
    embedding: (input, dimensions) => fakeJinaEmbedding(input as string, dimensions),
    inputTokens: fakeJinaTokens,
    embedRequest: {
      title: 'with Jina prompt tokens as usage',
      path: '/v1/embeddings',
      authorization: 'Bearer jina_test_key',
      body: (inputs) => ({ model: 'jina-embeddings-v3', input: inputs, embedding_type: 'float' }),
    },
    dimensions: {
      title: 'floats from Jina), and passes dimensions',
      count: 3,
      body: { input: ['hello world'], dimensions: 3, embedding_type: 'float' },
      exact: false,
    },
    tokenArrays: 'refused',
    batching: {
      title: 'more inputs than max_embedding_inputs into batches',
      model: 'jina-embed-small',
      inputs: ['a', 'bb', 'ccc', 'dddd', 'eeeee'],
      batches: [['a', 'bb'], ['ccc', 'dddd'], ['eeeee']],
      authorization: 'Bearer jina_small_key',
      inputField: 'input',
    },
    rerankRequest: {
      title: 'with Jina token usage',
      path: '/v1/rerank',
      authorization: 'Bearer jina_test_key',
      body: (query, documents) => ({ model: 'jina-reranker-v2-base-multilingual', query, documents, return_documents: false }),
      usage: (query, documents) => ({ total_tokens: fakeJinaTokens([query, ...documents]) }),
    },
    topN: { title: 'passes top_n to Jina and returns that many, with the documents the gateway attaches', body: { top_n: 2, return_documents: false } },
    errors: [
      {
        title: '429 with the upstream Retry-After',
        cases: [
          {
            failure: { status: 429, body: { detail: 'Rate limit exceeded' }, headers: { 'retry-after': '9' } },
            call: 'rerank',
            errorClass: OpenAI.RateLimitError,
            code: 'upstream_rate_limited',
            retryAfter: '9',
          },
        ],
      },
      {
        // The refused credential is out of service until an operator resets it: the suite resets it between cases.
        title: '401 and an empty balance (403) from Jina are 502 upstream_auth_failed',
        cases: [
          { failure: { status: 401, body: fixture('jina', 'errors/401-invalid-api-key.json') }, call: 'embed', status: 502, code: 'upstream_auth_failed' },
          { failure: { status: 403, body: fixture('jina', 'errors/403-insufficient-balance.json') }, call: 'embed', code: 'upstream_auth_failed' },
        ],
      },
      {
        title: '422 from Jina is 400 upstream_bad_request naming the field',
        cases: [
          {
            failure: { status: 422, body: fixture('jina', 'errors/422-validation.json') },
            call: 'embed',
            errorClass: OpenAI.BadRequestError,
            code: 'upstream_bad_request',
            message: 'body.input: Field required',
          },
        ],
      },
    ],
  },
  {
    name: 'TEI',
    start: startFakeTeiUpstream,
    document: (url) => ({
      upstreams: [
        // One TEI process per model: an embedder and a reranker; only the first was started with --api-key.
        { id: 'tei-embed', provider: 'tei', base_url: url, api_key: 'tei-secret' },
        { id: 'tei-rerank', provider: 'tei', base_url: url },
      ],
      models: [
        { id: 'bge-small', type: 'embedding', owned_by: 'baai', routes: [{ upstream: 'tei-embed', model: 'BAAI/bge-small-en-v1.5' }] },
        { id: 'bge-reranker', type: 'rerank', owned_by: 'baai', routes: [{ upstream: 'tei-rerank', model: 'BAAI/bge-reranker-base' }] },
      ],
    }),
    embedModel: 'bge-small',
    rerankModel: 'bge-reranker',
    embedding: fakeTeiEmbedding,
    // TEI reports no usage: the gateway counts the tokens itself, and the response still carries them.
    embedRequest: {
      title: 'with usage counted by the gateway',
      path: '/embed',
      authorization: 'Bearer tei-secret',
      body: (inputs) => ({ inputs, normalize: true }),
    },
    dimensions: { title: 'floats from TEI), and passes dimensions', count: 5, body: { inputs: ['hello world'], normalize: true, dimensions: 5 }, exact: true },
    tokenArrays: 'passed',
    batching: {
      title: `more than ${TEI_MAX_CLIENT_BATCH_SIZE} inputs into batches TEI accepts`,
      model: 'bge-small',
      inputs: teiBatch,
      batches: [teiBatch.slice(0, TEI_MAX_CLIENT_BATCH_SIZE), teiBatch.slice(TEI_MAX_CLIENT_BATCH_SIZE)],
      authorization: 'Bearer tei-secret',
      inputField: 'inputs',
    },
    rerankRequest: {
      title: 'no usage, no auth header without api_key',
      path: '/rerank',
      authorization: undefined,
      body: (query, documents) => ({ query, texts: documents, return_text: false, raw_scores: false }),
      usage: () => undefined,
    },
    topN: { title: 'cuts to top_n itself (TEI has none), with the documents when asked', body: 'absent' },
    errors: [
      {
        title: '429 (overloaded) with the upstream Retry-After',
        cases: [
          {
            failure: { status: 429, body: fixture('tei', 'errors/429-overloaded.json'), headers: { 'retry-after': '2' } },
            call: 'embed',
            errorClass: OpenAI.RateLimitError,
            code: 'upstream_rate_limited',
            retryAfter: '2',
          },
        ],
      },
      {
        title: '401 from a TEI started with --api-key is 502 upstream_auth_failed',
        cases: [{ failure: { status: 401, body: '' }, call: 'embed', status: 502, code: 'upstream_auth_failed' }],
      },
      {
        title: '413 (batch too large) is 400 upstream_bad_request with TEI message; 424 is 502',
        cases: [
          {
            failure: { status: 413, body: fixture('tei', 'errors/413-batch-size.json') },
            call: 'embed',
            errorClass: OpenAI.BadRequestError,
            code: 'upstream_bad_request',
            message: 'maximum allowed batch size',
          },
          { failure: { status: 424, body: fixture('tei', 'errors/424-inference-failed.json') }, call: 'rerank', status: 502, code: 'upstream_error' },
        ],
      },
    ],
  },
];

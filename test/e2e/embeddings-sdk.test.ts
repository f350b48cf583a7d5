import OpenAI from 'openai';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeEmbedding } from '../fake-upstreams/openai-upstream.js';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';
import { conformanceErrors } from '../support/openai-conformance.js';

let harness: OpenAIFakeGateway;
let token: string;
let client: OpenAI;

beforeAll(async () => {
  harness = await startOpenAIFakeGateway();
  token = await harness.createToken({ team: 'search' });
  client = harness.clientFor(token);
});
afterAll(async () => {
  await harness.close();
});
beforeEach(() => {
  harness.upstream.options = {};
  harness.upstream.requests.length = 0;
});

async function post(
  body: unknown,
  bearer = token,
): Promise<{ status: number; body: Record<string, unknown> & { error?: { code: string; param: string | null }; detail?: unknown } }> {
  const response = await fetch(`${harness.gateway.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as never };
}

/** A string of exactly `count` o200k_base tokens, checked with the tokenizer the spec names. */
function textOfTokens(count: number): string {
  const text = ' the'.repeat(count);
  expect(countTokens(text)).toBe(count);
  return text;
}

describe('embeddings through the SDK', () => {
  it('returns float vectors at their inputs indexes, with usage, in the OpenAI shape', async () => {
    const inputs = ['first input', 'b', 'a third, longer input'];
    const raw = await client.embeddings.create({ model: 'text-embedding-3-small', input: inputs, encoding_format: 'float' }).asResponse();
    const body = (await raw.json()) as {
      data: Array<{ index: number; embedding: number[] }>;
      model: string;
      usage: { prompt_tokens: number; total_tokens: number };
    };
    expect(conformanceErrors('CreateEmbeddingResponse', body)).toEqual([]);
    expect(body.model).toBe('text-embedding-3-small');
    expect(body.data.map((item) => item.index)).toEqual([0, 1, 2]);
    body.data.forEach((item, index) => expect(item.embedding).toEqual(fakeEmbedding(inputs[index] as string)));
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens);
    expect(harness.upstream.requests[0]?.body).toMatchObject({ model: 'text-embedding-3-small', input: inputs, encoding_format: 'float' });
  });

  it('serves the SDK default (base64 on the wire, floats in the SDK)', async () => {
    const result = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello world' });
    const expected = fakeEmbedding('hello world');
    result.data[0]?.embedding.forEach((value, index) => expect(value).toBeCloseTo(expected[index] as number, 6));
    expect(harness.upstream.requests[0]?.body).toMatchObject({ encoding_format: 'base64' });
  });

  it('returns base64 of little-endian float32 when asked, and honours dimensions', async () => {
    const result = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['abc'], encoding_format: 'base64', dimensions: 3 });
    const encoded = result.data[0]?.embedding as unknown as string;
    expect(typeof encoded).toBe('string');
    const bytes = Buffer.from(encoded, 'base64');
    const vector = Array.from({ length: bytes.length / 4 }, (_, index) => bytes.readFloatLE(index * 4));
    expect(vector).toHaveLength(3);
    vector.forEach((value, index) => expect(value).toBeCloseTo(fakeEmbedding('abc', 3)[index] as number, 6));
    expect(harness.upstream.requests[0]?.body).toMatchObject({ dimensions: 3 });
  });

  it('converts when the upstream answers in the other format', async () => {
    // The batched upstream is the same fake; ask it for floats through a client that wants base64 and back.
    const asFloat = await post({ model: 'batched-embed', input: ['xyz'], encoding_format: 'float' });
    expect((asFloat.body['data'] as Array<{ embedding: number[] }>)[0]?.embedding).toEqual(fakeEmbedding('xyz'));
  });

  it('accepts token arrays, one or many', async () => {
    const many = await post({
      model: 'text-embedding-3-small',
      input: [
        [1, 2, 3],
        [4, 5],
      ],
      encoding_format: 'float',
    });
    expect(many.status).toBe(200);
    expect((many.body['data'] as Array<{ embedding: number[] }>).map((item) => item.embedding[0])).toEqual([0.003, 0.002]);
    const one = await post({ model: 'text-embedding-3-small', input: [7, 8, 9, 10], encoding_format: 'float' });
    expect(one.body['data'] as Array<{ embedding: number[] }>).toHaveLength(1);
  });

  it('splits a large request into batches and keeps every vector at its index', async () => {
    const inputs = ['a', 'bb', 'ccc', 'dddd', 'eeeee'];
    const result = await client.embeddings.create({ model: 'batched-embed', input: inputs, encoding_format: 'float' });
    expect(harness.upstream.requests.map((request) => (request.body as { input: string[] }).input)).toEqual(
      expect.arrayContaining([['a', 'bb'], ['ccc', 'dddd'], ['eeeee']]),
    );
    expect(harness.upstream.requests).toHaveLength(3);
    expect(result.data.map((item) => item.index)).toEqual([0, 1, 2, 3, 4]);
    result.data.forEach((item, index) => expect(item.embedding[0]).toBeCloseTo((inputs[index] as string).length / 1000, 6));
    // Usage is the sum over the three batches of what the fake reports: ⌈length / 4⌉ per input.
    expect(result.usage.prompt_tokens).toBe(inputs.reduce((sum, input) => sum + Math.ceil(input.length / 4), 0));
  });

  it('counts usage itself when the upstream reports none, and logs it as estimated', async () => {
    harness.upstream.options = { omitUsage: true };
    const { data, response } = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['hello world', 'again'] }).withResponse();
    expect(data.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const row = await harness.logRow(response.headers.get('x-request-id'));
    expect(row).toMatchObject({ endpoint: 'embeddings', model: 'text-embedding-3-small', usageSource: 'estimated', promptTokens: 3, completionTokens: 0 });
  });
});

describe('embeddings limits and errors', () => {
  it('accepts 2048 tokens per input and refuses 2049, naming the input', async () => {
    const atLimit = textOfTokens(2048);
    const overLimit = textOfTokens(2049);
    expect((await post({ model: 'text-embedding-3-small', input: ['short', atLimit] })).status).toBe(200);
    harness.upstream.requests.length = 0;
    const refused = await post({ model: 'text-embedding-3-small', input: ['short', overLimit] });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'validation_error', param: 'input[1]' });
    expect(refused.body.detail).toEqual([
      { loc: ['body', 'input', 1], msg: 'Input has more than 2048 tokens; at most 2048 are allowed per input', type: 'too_long' },
    ]);
    const single = await post({ model: 'text-embedding-3-small', input: overLimit });
    expect(single.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'input'], type: 'too_long' })]);
    const tokens = await post({ model: 'text-embedding-3-small', input: [Array.from({ length: 2049 }, () => 1)] });
    expect(tokens.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'input', 0], type: 'too_long' })]);
    expect(harness.upstream.requests).toHaveLength(0);
  });

  const refused: Array<[string, Record<string, unknown>, (string | number)[]]> = [
    ['input missing', { model: 'text-embedding-3-small' }, ['body', 'input']],
    ['an empty string', { model: 'text-embedding-3-small', input: '' }, ['body', 'input']],
    ['an empty list', { model: 'text-embedding-3-small', input: [] }, ['body', 'input']],
    ['an empty string in the list', { model: 'text-embedding-3-small', input: ['ok', ''] }, ['body', 'input', 1]],
    ['a number in a list of strings', { model: 'text-embedding-3-small', input: ['ok', 3.5] }, ['body', 'input', 1]],
    ['more than 2048 inputs', { model: 'text-embedding-3-small', input: Array.from({ length: 2049 }, () => 'x') }, ['body', 'input']],
    ['an unknown encoding_format', { model: 'text-embedding-3-small', input: 'x', encoding_format: 'hex' }, ['body', 'encoding_format']],
    ['dimensions of 0', { model: 'text-embedding-3-small', input: 'x', dimensions: 0 }, ['body', 'dimensions']],
  ];
  for (const [name, body, loc] of refused) {
    it(`refuses ${name} with 422 naming the field`, async () => {
      const answer = await post(body);
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toContainEqual(expect.objectContaining({ loc }));
      expect(harness.upstream.requests).toHaveLength(0);
    });
  }

  it('accepts exactly 2048 inputs', async () => {
    expect((await post({ model: 'text-embedding-3-small', input: Array.from({ length: 2048 }, () => 'x') })).status).toBe(200);
  });

  it('refuses a chat model with 400 naming its type, and a token without the scope with 403', async () => {
    const wrongType = await post({ model: 'gpt-4o-mini', input: 'x' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error?.code).toBe('model_type_mismatch');
    expect(JSON.stringify(wrongType.body)).toContain('chat model');
    const chatOnly = await harness.createToken({ scopes: ['chat'] });
    expect((await post({ model: 'text-embedding-3-small', input: 'x' }, chatOnly)).status).toBe(403);
    await expect(client.embeddings.create({ model: 'gpt-4o-mini', input: 'x' })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });
});

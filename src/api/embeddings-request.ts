import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError, type ValidationIssue } from '../errors/index.js';
import { countTokens } from '../usage/index.js';
import { toIssue, validationError } from './validation-issues.js';

/** Per the spec, for every input; OpenAI's own limit for its embedding models is the same. */
export const MAX_TOKENS_PER_INPUT = 2048;
/** OpenAI accepts at most 2048 inputs in one request; so do we, whatever batching happens behind. */
export const MAX_INPUTS = 2048;
/**
 * The most UTF-8 bytes one o200k_base token covers (128 spaces). A string can have no more
 * UTF-16 code units than bytes, so one longer than MAX_TOKENS_PER_INPUT × this cannot fit in the
 * limit, and is refused without tokenizing. Checked against the vocabulary in
 * usage/token-segments.test.ts.
 */
export const MAX_BYTES_PER_TOKEN = 128;

const TokenArray = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 });

export const EmbeddingsRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    input: Type.Union([
      Type.String({ minLength: 1 }),
      Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_INPUTS }),
      TokenArray,
      Type.Array(TokenArray, { minItems: 1, maxItems: MAX_INPUTS }),
    ]),
    encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    user: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export type EmbeddingsRequest = Static<typeof EmbeddingsRequestSchema>;

/** The request with its input as a list: strings, or token arrays. */
export interface ParsedEmbeddingsRequest {
  request: EmbeddingsRequest;
  inputs: Array<string | number[]>;
  /** Whether `input` was a single string or token array (errors then name `input`, not `input[0]`). */
  single: boolean;
}

const checker = TypeCompiler.Compile(EmbeddingsRequestSchema);

/**
 * The request's shape, checked without tokenizing: the model is looked up before any input is
 * counted (checkEmbeddingTokenLimits), so that a request that fails cheaper checks never costs a
 * tokenizer pass.
 */
export function parseEmbeddingsRequest(body: unknown): ParsedEmbeddingsRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_body', 'The request body must be a JSON object.');
  }
  if (!checker.Check(body)) throw validationError(inputIssues(body) ?? [...checker.Errors(body)].slice(0, 20).map(toIssue));
  const { input } = body;
  const single = typeof input === 'string' || (input.length > 0 && input.every((item) => typeof item === 'number'));
  const inputs = (single ? [input] : input) as Array<string | number[]>;
  const issues = inputs.flatMap((item, index) => (tooLongToCount(item) ? [tooManyTokens(single, index)] : []));
  if (issues.length > 0) throw validationError(issues);
  return { request: body, inputs, single };
}

/** Refuses, with every offending input named, inputs over MAX_TOKENS_PER_INPUT tokens; counting stops at the limit. */
export async function checkEmbeddingTokenLimits({ inputs, single }: ParsedEmbeddingsRequest): Promise<void> {
  const issues: ValidationIssue[] = [];
  for (const [index, input] of inputs.entries()) {
    if (typeof input !== 'string') continue;
    // Every byte-level BPE token covers at least one byte: at most 2048 bytes is within the limit.
    if (Buffer.byteLength(input) <= MAX_TOKENS_PER_INPUT) continue;
    if ((await countTokens(input, MAX_TOKENS_PER_INPUT)) > MAX_TOKENS_PER_INPUT) issues.push(tooManyTokens(single, index));
  }
  if (issues.length > 0) throw validationError(issues);
}

function tooLongToCount(input: string | number[]): boolean {
  return typeof input === 'string' ? input.length > MAX_TOKENS_PER_INPUT * MAX_BYTES_PER_TOKEN : input.length > MAX_TOKENS_PER_INPUT;
}

function tooManyTokens(single: boolean, index: number): ValidationIssue {
  return {
    loc: single ? ['body', 'input'] : ['body', 'input', index],
    msg: `Input has more than ${MAX_TOKENS_PER_INPUT} tokens; at most ${MAX_TOKENS_PER_INPUT} are allowed per input`,
    type: 'too_long',
  };
}

/**
 * The union's own error says only "invalid type"; say what is wrong with `input` instead, naming
 * the offending item.
 */
function inputIssues(body: object): ValidationIssue[] | null {
  const { input } = body as { input?: unknown };
  if (input === undefined) return [{ loc: ['body', 'input'], msg: 'Field required', type: 'missing' }];
  if (input === '') return [{ loc: ['body', 'input'], msg: 'String should have at least 1 character', type: 'string_too_short' }];
  if (!Array.isArray(input))
    return typeof input === 'string'
      ? null
      : [{ loc: ['body', 'input'], msg: 'Input should be a string or a list of strings or token arrays', type: 'union_type' }];
  if (input.length === 0) return [{ loc: ['body', 'input'], msg: 'List should have at least 1 item', type: 'too_short' }];
  if (input.length > MAX_INPUTS) return [{ loc: ['body', 'input'], msg: `List should have at most ${MAX_INPUTS} items`, type: 'too_long' }];
  const index = input.findIndex(
    (item) => !(typeof item === 'string' && item !== '') && !(Array.isArray(item) && item.length > 0 && item.every(isToken)) && !isToken(item),
  );
  if (index === -1) return null;
  return [{ loc: ['body', 'input', index], msg: 'Input should be a non-empty string or a non-empty array of token ids', type: 'value_error' }];
}

function isToken(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

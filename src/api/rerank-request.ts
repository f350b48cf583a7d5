import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError } from '../errors/index.js';
import { toIssue, validationError } from './validation-issues.js';

/** Cohere documents 1,000 as the most documents worth sending in one request; we hold to it. */
export const MAX_DOCUMENTS = 1000;

export const RerankRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    query: Type.String({ minLength: 1 }),
    documents: Type.Array(Type.String(), { minItems: 1, maxItems: MAX_DOCUMENTS }),
    top_n: Type.Optional(Type.Integer({ minimum: 1 })),
    return_documents: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);

export type RerankRequest = Static<typeof RerankRequestSchema>;

const checker = TypeCompiler.Compile(RerankRequestSchema);

export function parseRerankRequest(body: unknown): RerankRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_body', 'The request body must be a JSON object.');
  }
  if (!checker.Check(body)) throw validationError([...checker.Errors(body)].slice(0, 20).map(toIssue));
  return body;
}

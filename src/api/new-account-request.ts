import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError } from '../errors/index.js';
import { toIssue, validationError } from './validation-issues.js';

/** `POST /admin/v1/credentials`: an account added at run time. */
export const NewAccountRequestSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[A-Za-z0-9._-]{1,128}$' }),
    provider: Type.Literal('codex'),
    /** The Codex auth.json, as an object or as its text. */
    auth: Type.Union([Type.Object({}, { additionalProperties: true }), Type.String({ minLength: 2 })]),
    base_url: Type.Optional(Type.String({ pattern: '^https?://' })),
    token_url: Type.Optional(Type.String({ pattern: '^https?://' })),
  },
  { additionalProperties: false },
);

export type NewAccountRequest = Static<typeof NewAccountRequestSchema>;

const checker = TypeCompiler.Compile(NewAccountRequestSchema);

export function parseNewAccountRequest(body: unknown): NewAccountRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new GatewayError('invalid_body', 'The request body must be a JSON object.');
  if (!checker.Check(body)) throw validationError([...checker.Errors(body)].slice(0, 20).map(toIssue));
  return body;
}

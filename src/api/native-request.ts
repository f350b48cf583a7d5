import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError } from '../errors/index.js';
import { toIssue, validationError } from './validation-issues.js';

/**
 * What the gateway checks of a native (Responses API, as Codex CLI speaks it) request before it
 * passes the body on untouched: the fields it routes by and the two spec 4.3 rules. Everything
 * else is the upstream's to judge.
 */
export const NativeRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    input: Type.Array(Type.Unknown()),
    stream: Type.Literal(true),
    prompt_cache_key: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export interface NativeRequest {
  model: string;
  /** Codex sends its session id here; it is also the session when no header names one. */
  prompt_cache_key?: string;
}

const checker = TypeCompiler.Compile(NativeRequestSchema);

export function parseNativeRequest(body: unknown): NativeRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_body', 'The request body must be a JSON object.');
  }
  if (!checker.Check(body)) {
    // `stream: false` reads better as the rule it breaks than as "expected true".
    const issues = [...checker.Errors(body)]
      .slice(0, 20)
      .map(toIssue)
      .map((issue) =>
        issue.loc.length === 2 && issue.loc[1] === 'stream'
          ? { ...issue, msg: 'must be true: the native endpoint always streams', type: 'literal_error' }
          : issue,
      );
    throw validationError(issues);
  }
  return body as NativeRequest;
}

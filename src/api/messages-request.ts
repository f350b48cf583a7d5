import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError } from '../errors/index.js';
import type { MessagesRequestBody } from '../protocols/anthropic-messages/messages-types.js';
import { toIssue, validationError } from './validation-issues.js';

/** Blocks, tools and the rest are checked only for shape: their kinds are the upstream's (or the conversion's) business. */
const AnyObject = Type.Object({}, { additionalProperties: true });

/**
 * What the gateway checks of a `POST /v1/messages` request before it routes it, in the ranges
 * Anthropic's API reference gives. Everything else (content blocks, tools, thinking, betas…) is
 * judged by whoever serves it: an Anthropic upstream, which gets the body as it came, or the
 * conversion to chat, which refuses by name what it cannot do.
 */
const MessagesRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    messages: Type.Array(Type.Object({ role: Type.String(), content: Type.Union([Type.String(), Type.Array(AnyObject)]) }, { additionalProperties: true })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    stream: Type.Optional(Type.Boolean()),
    system: Type.Optional(Type.Union([Type.String(), Type.Array(AnyObject)])),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    metadata: Type.Optional(AnyObject),
    tools: Type.Optional(Type.Array(AnyObject)),
    tool_choice: Type.Optional(AnyObject),
  },
  { additionalProperties: true },
);

const checker = TypeCompiler.Compile(MessagesRequestSchema);

/**
 * A checked `POST /v1/messages` body. `max_tokens` is required by Anthropic for a message, not
 * for a token count: `requireMaxTokens` says which this is.
 */
export function parseMessagesRequest(body: unknown, requireMaxTokens: boolean): MessagesRequestBody {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_body', 'The request body must be a JSON object.');
  }
  if (!checker.Check(body)) {
    throw validationError([...checker.Errors(body)].slice(0, 20).map(toIssue));
  }
  const request = body as MessagesRequestBody;
  if (requireMaxTokens && request['max_tokens'] === undefined) {
    throw new GatewayError('invalid_body', 'max_tokens: Field required', { param: 'max_tokens' });
  }
  return request;
}

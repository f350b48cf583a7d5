import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError, type ValidationIssue } from '../errors/index.js';
import { toIssue, validationError } from './validation-issues.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

const ROLES = ['system', 'user', 'assistant', 'developer', 'tool', 'function'] as const;

/** Content parts are checked only for shape; their kinds (text, image_url, input_audio, file…) are the upstream's business. */
const ContentPart = Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true });

const Message = Type.Object(
  {
    role: Type.Union(ROLES.map((role) => Type.Literal(role))),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(ContentPart), Type.Null()])),
    name: Type.Optional(Type.String()),
    tool_call_id: Type.Optional(Type.String()),
    tool_calls: Nullable(Type.Array(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: true },
);

/**
 * What the gateway checks of a chat completions request. Every other OpenAI parameter (tools,
 * tool_choice, response_format, stop, seed, logprobs, user…) passes through to the upstream,
 * which knows its own rules best.
 */
export const ChatCompletionRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    messages: Type.Array(Message, { minItems: 1 }),
    stream: Nullable(Type.Boolean()),
    temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
    max_tokens: Nullable(Type.Integer({ minimum: 1 })),
    max_completion_tokens: Nullable(Type.Integer({ minimum: 1 })),
    n: Nullable(Type.Integer({ minimum: 1, maximum: 128 })),
    stream_options: Nullable(Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: true })),
    metadata: Nullable(Type.Object({ session_id: Type.Optional(Type.String()), sticky_key: Type.Optional(Type.String()) }, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

export type ChatCompletionRequest = Static<typeof ChatCompletionRequestSchema> & Record<string, unknown>;

const checker = TypeCompiler.Compile(ChatCompletionRequestSchema);

/** Role rules a schema cannot express without unreadable error messages. */
const CONTENT_REQUIRED = new Set(['system', 'user', 'developer', 'tool']);

export function parseChatCompletionRequest(body: unknown): ChatCompletionRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_body', 'The request body must be a JSON object.');
  }
  if (!checker.Check(body)) {
    throw validationError([...checker.Errors(body)].slice(0, 20).map(toIssue));
  }
  const issues: ValidationIssue[] = [];
  body.messages.forEach((message, index) => {
    if (CONTENT_REQUIRED.has(message.role) && (message.content === undefined || message.content === null)) {
      issues.push({ loc: ['body', 'messages', index, 'content'], msg: 'Field required', type: 'missing' });
    }
    if (message.role === 'tool' && message.tool_call_id === undefined) {
      issues.push({ loc: ['body', 'messages', index, 'tool_call_id'], msg: 'Field required', type: 'missing' });
    }
  });
  if (issues.length > 0) throw validationError(issues);
  return body as ChatCompletionRequest;
}

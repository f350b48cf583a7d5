import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError } from '../errors/index.js';
import type { ResponsesRequest } from '../protocols/openai-responses/responses-types.js';
import { toIssue, validationError } from './validation-issues.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

/** Items and tools are checked only for shape: their kinds are the upstream's (or the conversion's) business. */
const AnyObject = Type.Object({}, { additionalProperties: true });

/**
 * What the gateway checks of a `POST /v1/responses` request before it routes it, in the ranges
 * OpenAI's `CreateResponse` documents. Everything else (tools, tool_choice, text, reasoning,
 * include…) is judged by whoever serves it: an upstream that speaks the Responses API, or the
 * conversion to chat, which refuses by name what it cannot do.
 */
export const ResponsesRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    input: Nullable(Type.Union([Type.String(), Type.Array(AnyObject)])),
    instructions: Nullable(Type.String()),
    temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
    top_p: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
    max_output_tokens: Nullable(Type.Integer({ minimum: 1 })),
    max_tool_calls: Nullable(Type.Integer({ minimum: 1 })),
    top_logprobs: Nullable(Type.Integer({ minimum: 0, maximum: 20 })),
    stream: Nullable(Type.Boolean()),
    store: Nullable(Type.Boolean()),
    background: Nullable(Type.Boolean()),
    parallel_tool_calls: Nullable(Type.Boolean()),
    // OpenAI's metadata is a map of strings; `session_id` and `sticky_key` are the gateway's session keys.
    metadata: Nullable(Type.Record(Type.String(), Type.String())),
    previous_response_id: Nullable(Type.String({ minLength: 1 })),
    prompt_cache_key: Nullable(Type.String()),
    user: Nullable(Type.String()),
    safety_identifier: Nullable(Type.String()),
    tools: Nullable(Type.Array(Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true }))),
    tool_choice: Nullable(Type.Union([Type.String(), AnyObject])),
    include: Nullable(Type.Array(Type.String())),
    truncation: Nullable(Type.Union([Type.Literal('auto'), Type.Literal('disabled')])),
    text: Nullable(AnyObject),
    reasoning: Nullable(AnyObject),
    stream_options: Nullable(AnyObject),
    conversation: Nullable(Type.Union([Type.String(), AnyObject])),
  },
  { additionalProperties: true },
);

/**
 * A checked request body: the protocol's one request type (protocols/openai-responses), the fields
 * above in their ranges, anything else as sent. The schema checks shapes, the type names the
 * parts; the converters check at run time what they read of the rest.
 */
export type ResponsesRequestBody = ResponsesRequest & Record<string, unknown>;

/** Every field the schema checks is a field of the protocol's type, so the two cannot drift apart. */
type UntypedSchemaFields = Exclude<keyof Static<typeof ResponsesRequestSchema>, keyof ResponsesRequest>;
const schemaFieldsAreTyped: [UntypedSchemaFields] extends [never] ? true : UntypedSchemaFields = true;
void schemaFieldsAreTyped;

const checker = TypeCompiler.Compile(ResponsesRequestSchema);

export function parseResponsesRequest(body: unknown): ResponsesRequestBody {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_body', 'The request body must be a JSON object.');
  }
  if (!checker.Check(body)) {
    throw validationError([...checker.Errors(body)].slice(0, 20).map(toIssue));
  }
  return body as ResponsesRequestBody;
}

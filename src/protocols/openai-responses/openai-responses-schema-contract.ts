import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/**
 * Test support (a `-contract.ts` file, left out of the build): OpenAI's published Responses
 * schemas (test/fixtures/conformance/openai-responses-schemas.json) and the chat request schema
 * (openai-schemas.json), compiled with ajv the way test/support/openai-conformance.ts does.
 */
const fixtures = new URL('../../../test/fixtures/conformance/', import.meta.url);

function schemasOf(file: string): Record<string, unknown> {
  const document = JSON.parse(readFileSync(fileURLToPath(new URL(file, fixtures)), 'utf8')) as { schemas: Record<string, unknown> };
  return document.schemas;
}

const ajv = new Ajv({ strict: false, allErrors: true });
const addFormats = addFormatsModule as unknown as (instance: Ajv) => void;
addFormats(ajv);
ajv.addFormat('unixtime', { type: 'number', validate: (value: number) => Number.isInteger(value) && value >= 0 });
ajv.addSchema({ $id: 'openai-responses.json', components: { schemas: schemasOf('openai-responses-schemas.json') } });
ajv.addSchema({ $id: 'openai.json', components: { schemas: withoutNullable(schemasOf('openai-schemas.json')) } });

/** The older subset still says OpenAPI 3.0's `nullable: true`, which ajv reads only as JSON Schema's null type. */
function withoutNullable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutNullable);
  if (schema === null || typeof schema !== 'object') return schema;
  const { nullable, ...rest } = schema as Record<string, unknown>;
  const converted = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, withoutNullable(value)]));
  return nullable === true ? { anyOf: [converted, { type: 'null' }] } : converted;
}

export type ResponsesSchemaName = 'Response' | 'ResponseStreamEvent' | 'CreateChatCompletionRequest';

const validators = new Map<ResponsesSchemaName, ValidateFunction>();

function validatorFor(name: ResponsesSchemaName): ValidateFunction {
  let validate = validators.get(name);
  if (validate === undefined) {
    const document = name === 'CreateChatCompletionRequest' ? 'openai.json' : 'openai-responses.json';
    validate = ajv.getSchema(`${document}#/components/schemas/${name}`) as ValidateFunction;
    validators.set(name, validate);
  }
  return validate;
}

/** ajv's errors, or an empty list when `value` conforms to the named OpenAI schema. */
export function responsesSchemaErrors(name: ResponsesSchemaName, value: unknown): string[] {
  const validate = validatorFor(name);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
}

/**
 * The event schema is a union of ~60 events: when one fails, ajv lists every branch's complaint.
 * Checking against the branch named by the event's `type` gives a readable failure; the union
 * check is kept so the event is also known to be one of the published ones.
 */
export function streamEventSchemaErrors(event: unknown): string[] {
  const union = responsesSchemaErrors('ResponseStreamEvent', event);
  if (union.length === 0) return [];
  const type = (event as { type?: unknown }).type;
  const branch = typeof type === 'string' ? EVENT_SCHEMAS[type] : undefined;
  if (branch === undefined) return [`no published event has type ${String(type)}`];
  const validate = ajv.getSchema(`openai-responses.json#/components/schemas/${branch}`) as ValidateFunction;
  if (validate(event)) return union.slice(0, 5);
  return (validate.errors ?? []).map((error) => `${branch}${error.instancePath} ${error.message ?? ''}`);
}

const EVENT_SCHEMAS: Record<string, string> = {
  'response.created': 'ResponseCreatedEvent',
  'response.in_progress': 'ResponseInProgressEvent',
  'response.completed': 'ResponseCompletedEvent',
  'response.incomplete': 'ResponseIncompleteEvent',
  'response.failed': 'ResponseFailedEvent',
  'response.output_item.added': 'ResponseOutputItemAddedEvent',
  'response.output_item.done': 'ResponseOutputItemDoneEvent',
  'response.content_part.added': 'ResponseContentPartAddedEvent',
  'response.content_part.done': 'ResponseContentPartDoneEvent',
  'response.output_text.delta': 'ResponseTextDeltaEvent',
  'response.output_text.done': 'ResponseTextDoneEvent',
  'response.refusal.delta': 'ResponseRefusalDeltaEvent',
  'response.refusal.done': 'ResponseRefusalDoneEvent',
  'response.function_call_arguments.delta': 'ResponseFunctionCallArgumentsDeltaEvent',
  'response.function_call_arguments.done': 'ResponseFunctionCallArgumentsDoneEvent',
  error: 'ResponseErrorEvent',
};

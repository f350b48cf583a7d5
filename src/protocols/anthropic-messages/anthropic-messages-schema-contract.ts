import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';

/**
 * Test support (a `-contract.ts` file, left out of the build): Anthropic's published Messages
 * schemas (test/fixtures/conformance/anthropic-messages-schemas.json: the message, every stream
 * event and the error envelope), compiled with ajv.
 */
const document = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../test/fixtures/conformance/anthropic-messages-schemas.json', import.meta.url)), 'utf8'),
) as {
  schemas: Record<string, unknown>;
};

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addSchema({ $id: 'anthropic.json', components: { schemas: withoutNullTypes(document.schemas) } });

/** The document says `"type": null` on `Model` (an anyOf of strings), which OpenAPI reads as no type and ajv refuses. */
function withoutNullTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutNullTypes);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema as Record<string, unknown>)
      .filter(([key, value]) => !(key === 'type' && value === null))
      .map(([key, value]) => [key, withoutNullTypes(value)]),
  );
}

const validators = new Map<string, ValidateFunction>();

function errorsOf(name: string, value: unknown): string[] {
  let validate = validators.get(name);
  if (validate === undefined) {
    validate = ajv.getSchema(`anthropic.json#/components/schemas/${name}`) as ValidateFunction;
    validators.set(name, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${name}${error.instancePath} ${error.message ?? ''}`);
}

/** ajv's errors, or an empty list when `value` is a message as Anthropic publishes it. */
export function messageSchemaErrors(value: unknown): string[] {
  return errorsOf('Message', value);
}

/** The same for an error body (`{"type": "error", "error": {…}}`). */
export function errorBodySchemaErrors(value: unknown): string[] {
  return errorsOf('ErrorResponse', value);
}

const EVENT_SCHEMAS: Record<string, string> = {
  message_start: 'MessageStartEvent',
  message_delta: 'MessageDeltaEvent',
  message_stop: 'MessageStopEvent',
  content_block_start: 'ContentBlockStartEvent',
  content_block_delta: 'ContentBlockDeltaEvent',
  content_block_stop: 'ContentBlockStopEvent',
};

/**
 * The same for a stream event, checked against the branch its `type` names (a readable failure)
 * and the published union. `ping` is documented beside the union ("Event types" of Anthropic's
 * streaming guide) but not in it: it is checked to be `{"type": "ping"}` alone.
 */
export function streamEventSchemaErrors(event: unknown): string[] {
  const type = (event as { type?: unknown } | null)?.type;
  if (type === 'ping') return Object.keys(event as object).length === 1 ? [] : ['a ping event carries nothing but its type'];
  const branch = typeof type === 'string' ? EVENT_SCHEMAS[type] : undefined;
  if (branch === undefined) return [`no published event has type ${String(type)}`];
  const errors = errorsOf(branch, event);
  return errors.length > 0 ? errors : errorsOf('MessageStreamEvent', event);
}

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/** OpenAI's published response schemas (test/fixtures/conformance, source in test/fixtures/README.md), checked with ajv. */
const schemaFile = fileURLToPath(new URL('../fixtures/conformance/openai-schemas.json', import.meta.url));
const document = JSON.parse(readFileSync(schemaFile, 'utf8')) as { schemas: Record<string, unknown> };

const ajv = new Ajv({ strict: false, allErrors: true });
const addFormats = addFormatsModule as unknown as (instance: Ajv) => void;
addFormats(ajv);
ajv.addFormat('unixtime', { type: 'number', validate: (value: number) => Number.isInteger(value) && value >= 0 });
ajv.addSchema({ $id: 'openai.json', components: { schemas: withoutNullable(document.schemas) } });

/**
 * OpenAPI 3.0's `nullable: true` as plain JSON Schema, which ajv needs when `nullable` stands
 * beside `$ref` or `anyOf` rather than `type`.
 */
function withoutNullable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutNullable);
  if (schema === null || typeof schema !== 'object') return schema;
  const { nullable, ...rest } = schema as Record<string, unknown>;
  const converted = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, withoutNullable(value)]));
  return nullable === true ? { anyOf: [converted, { type: 'null' }] } : converted;
}

const validators = new Map<string, ValidateFunction>();

export type OpenAISchemaName =
  | 'CreateChatCompletionResponse'
  | 'CreateChatCompletionStreamResponse'
  | 'ListModelsResponse'
  | 'Model'
  | 'ErrorResponse'
  | 'CreateEmbeddingResponse';

/** Returns ajv's error list, or an empty list when `value` conforms to OpenAI's schema. */
export function conformanceErrors(name: OpenAISchemaName, value: unknown): string[] {
  let validate = validators.get(name);
  if (validate === undefined) {
    validate = ajv.getSchema(`openai.json#/components/schemas/${name}`) as ValidateFunction;
    validators.set(name, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
}

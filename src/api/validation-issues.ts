import type { TSchema } from '@sinclair/typebox';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { GatewayError, type ValidationIssue } from '../errors/index.js';

/**
 * Compiled-validator errors as 422 `detail` items (`loc`, `msg`, `type`, as FastAPI-style
 * clients expect), and the GatewayError that carries them. The first issue names the field in
 * the message and in `param`, which is what the OpenAI SDKs show.
 */
export function validationError(issues: ValidationIssue[]): GatewayError {
  const [first] = issues;
  const field = first === undefined ? 'body' : fieldName(first.loc);
  const message = first === undefined ? 'Invalid request body.' : `${field}: ${first.msg}`;
  return new GatewayError('validation_error', message, { param: field, detail: issues });
}

export function toIssue(error: ValueError): ValidationIssue {
  const loc: (string | number)[] = ['body', ...pointerSegments(error.path)];
  const schema = error.schema as Record<string, unknown>;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return { loc, msg: 'Field required', type: 'missing' };
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return { loc, msg: `Input should be less than or equal to ${String(schema['maximum'])}`, type: 'less_than_equal' };
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return { loc, msg: `Input should be greater than or equal to ${String(schema['minimum'])}`, type: 'greater_than_equal' };
    case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.IntegerExclusiveMinimum:
      return { loc, msg: `Input should be greater than ${String(schema['exclusiveMinimum'])}`, type: 'greater_than' };
    case ValueErrorType.Integer:
      return { loc, msg: 'Input should be a valid integer', type: 'int_type' };
    case ValueErrorType.Number:
      return { loc, msg: 'Input should be a valid number', type: 'float_type' };
    case ValueErrorType.String:
      return { loc, msg: 'Input should be a valid string', type: 'string_type' };
    case ValueErrorType.StringMinLength:
      return { loc, msg: `String should have at least ${String(schema['minLength'])} character(s)`, type: 'string_too_short' };
    case ValueErrorType.StringMaxLength:
      return { loc, msg: `String should have at most ${String(schema['maxLength'])} characters`, type: 'string_too_long' };
    case ValueErrorType.Boolean:
      return { loc, msg: 'Input should be a valid boolean', type: 'bool_type' };
    case ValueErrorType.Array:
      return { loc, msg: 'Input should be a valid list', type: 'list_type' };
    case ValueErrorType.ArrayMinItems:
      return { loc, msg: `List should have at least ${String(schema['minItems'])} item(s)`, type: 'too_short' };
    case ValueErrorType.ArrayMaxItems:
      return { loc, msg: `List should have at most ${String(schema['maxItems'])} items`, type: 'too_long' };
    case ValueErrorType.Object:
      return { loc, msg: 'Input should be a valid object', type: 'dict_type' };
    case ValueErrorType.Union: {
      // `number | null` and the like: report what is wrong against the one non-null member.
      const members = (schema['anyOf'] as TSchema[] | undefined)?.filter((member) => member['type'] !== 'null') ?? [];
      const [only] = members;
      if (members.length === 1 && only !== undefined && error.value !== null) {
        const inner = Value.Errors(only, error.value).First();
        if (inner !== undefined) return toIssue({ ...inner, path: error.path + inner.path });
      }
      const choices = literalChoices(schema);
      return choices === null
        ? { loc, msg: 'Input has an invalid type or value', type: 'union_type' }
        : { loc, msg: `Input should be ${choices.map((choice) => `'${choice}'`).join(', ')}`, type: 'enum' };
    }
    default:
      return { loc, msg: error.message, type: 'value_error' };
  }
}

/** `['body', 'messages', 0, 'role']` → `messages[0].role` */
export function fieldName(loc: readonly (string | number)[]): string {
  return loc
    .slice(1)
    .reduce<string>((name, segment) => (typeof segment === 'number' ? `${name}[${segment}]` : name === '' ? segment : `${name}.${segment}`), '');
}

function pointerSegments(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment.replace(/~1/g, '/').replace(/~0/g, '~')));
}

function literalChoices(schema: Record<string, unknown>): string[] | null {
  const anyOf = schema['anyOf'] as Array<{ const?: unknown }> | undefined;
  if (anyOf === undefined) return null;
  const constants = anyOf.filter((member) => typeof member.const === 'string').map((member) => String(member.const));
  return constants.length === 0 ? null : constants;
}

import { isObject, parseJson, type JsonObject } from '../../core/index.js';
import { GatewayError } from '../../errors/index.js';

/**
 * What a successful JSON answer must be: the provider's wire schema, checked as far as the
 * gateway reads it. A body that is not is the upstream failing (`upstream_invalid_response`),
 * and another credential can still be tried.
 */
export interface JsonGuard<T> {
  /** What the body must be, as the error names it: `a chat completion`. */
  readonly expected: string;
  /** What a body that is not JSON at all is said not to be; `expected` when absent. */
  readonly unparsed?: string;
  test(value: unknown): value is T;
}

/** Any JSON object or array: for answers whose fields are read defensively one by one. */
export const JSON_ANSWER: JsonGuard<JsonObject | unknown[]> = {
  expected: 'JSON',
  test: (value): value is JsonObject | unknown[] => isObject(value) || Array.isArray(value),
};

/** The body parsed and checked by the guard; it throws `upstream_invalid_response` when it is not what the guard expects. */
export function readJson<T>(body: Buffer, guard: JsonGuard<T>, credentialId: string): T {
  const value = parseJson(body.toString('utf8'));
  if (value !== undefined && guard.test(value)) return value;
  const expected = value === undefined ? (guard.unparsed ?? guard.expected) : guard.expected;
  throw new GatewayError('upstream_invalid_response', `Upstream ${credentialId} answered with a body that is not ${expected}.`);
}

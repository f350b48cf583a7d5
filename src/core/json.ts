/** A JSON object whose keys are read one by one: what an upstream or a caller sent, not yet trusted. */
export type JsonObject = Record<string, unknown>;

/** Whether the value is an object to read keys from (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value as an object to read keys from, or undefined for arrays, null and scalars. */
export function asObject(value: unknown): JsonObject | undefined {
  return isObject(value) ? value : undefined;
}

/** The text parsed, or undefined when it is not JSON (JSON itself has no `undefined`). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The text as a JSON object; null when it is not JSON or not an object (what an upstream says is read defensively). */
export function parseJsonObject(text: string): JsonObject | null {
  const parsed = parseJson(text);
  return isObject(parsed) ? parsed : null;
}

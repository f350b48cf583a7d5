export type JsonObject = Record<string, unknown>;

/** The value as an object to read keys from, or undefined for arrays, null and scalars. */
export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

/** Longest piece of a caller's own input an error message quotes back. */
export const MAX_ECHO_LENGTH = 64;

/**
 * A caller's value quoted in an error message, cut to MAX_ECHO_LENGTH: a 5 MB model name is
 * answered with its first characters and its length, not echoed whole.
 */
export function echo(value: string): string {
  if (value.length <= MAX_ECHO_LENGTH) return `'${value}'`;
  return `'${value.slice(0, MAX_ECHO_LENGTH)}…' (${value.length} characters)`;
}

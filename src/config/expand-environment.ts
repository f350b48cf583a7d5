import { ConfigError } from './config-error.js';

// ${NAME}, ${NAME:-fallback}, and $$ for a literal dollar sign (docker-compose conventions).
const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}/g;

/**
 * Replaces environment references inside every string of a parsed YAML document. Expansion runs
 * on values, not on the raw text, so a variable's content can never change the document's shape.
 */
export function expandEnvironment(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') return expandString(value, env, path);
  if (Array.isArray(value)) return value.map((item, index) => expandEnvironment(item, env, `${path}[${index}]`));
  if (value !== null && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      result[key] = expandEnvironment(item, env, path === '' ? key : `${path}.${key}`);
    }
    return result;
  }
  return value;
}

function expandString(text: string, env: NodeJS.ProcessEnv, path: string): string {
  return text.replace(REFERENCE, (match, name: string | undefined, operator: string | undefined, fallback: string | undefined) => {
    if (match === '$$') return '$';
    const variable = name as string;
    const current = env[variable];
    if (operator === ':-') return current === undefined || current === '' ? (fallback ?? '') : current;
    if (operator === '-') return current ?? fallback ?? '';
    if (current === undefined) {
      throw new ConfigError(path, `environment variable ${variable} is not set (write \${${variable}:-} to allow it empty)`);
    }
    return current;
  });
}

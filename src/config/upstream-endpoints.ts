import type { UpstreamConfig } from './config-schema.js';

/** What an entry says about its credential; everything else describes the endpoint it reaches. */
const CREDENTIAL_KEYS = ['id', 'api_key', 'headers', 'max_in_flight', 'auth_file'] as const;

/**
 * Where and how an adapter reaches an upstream: the provider kind, base URL, connection pool size,
 * timeouts, caps and the provider's own keys, without any credential.
 */
export type EndpointConfig = Omit<UpstreamConfig, (typeof CREDENTIAL_KEYS)[number]> & {
  /** For logs: the provider and base URL, with `#2`… when one origin has several endpoints. */
  readonly name: string;
};

export interface EndpointGroup {
  readonly endpoint: EndpointConfig;
  /** The entries (one credential each) served through this endpoint, in config order. */
  readonly credentials: readonly UpstreamConfig[];
}

/**
 * Groups `upstreams[]` (one entry per credential) into endpoints: entries that differ only in
 * their credential (`id`, `api_key`, `headers`, `max_in_flight`, a codex account's `auth_file`) share one endpoint, and so one adapter and one
 * connection pool of `max_connections`. Entries with other differences (a pool size, a timeout, a
 * provider key, a network setting) get endpoints of their own, even to the same origin: a pool
 * sized for a small self-hosted server is never swamped by an entry with the default size.
 */
export function groupEndpoints(upstreams: readonly UpstreamConfig[]): EndpointGroup[] {
  const groups = new Map<string, { readonly endpoint: EndpointConfig; readonly credentials: UpstreamConfig[] }>();
  const names = new Map<string, number>();
  for (const upstream of upstreams) {
    const settings = endpointSettings(upstream);
    const key = endpointKey(upstream);
    const group = groups.get(key);
    if (group !== undefined) {
      group.credentials.push(upstream);
      continue;
    }
    const base = `${upstream.provider} ${describeBaseUrl(upstream.base_url)}`;
    const seen = (names.get(base) ?? 0) + 1;
    names.set(base, seen);
    groups.set(key, { endpoint: { ...settings, name: seen === 1 ? base : `${base} #${seen}` }, credentials: [upstream] });
  }
  return [...groups.values()];
}

/** An entry's endpoint on its own (an account added at run time), named `name` in logs. */
export function endpointOf(upstream: UpstreamConfig, name: string): EndpointConfig {
  return { ...endpointSettings(upstream), name };
}

/** What decides an entry's endpoint: entries with the same key share one adapter and connection pool. */
export function endpointKey(upstream: UpstreamConfig): string {
  return canonicalJson(endpointSettings(upstream));
}

function endpointSettings(upstream: UpstreamConfig): Omit<EndpointConfig, 'name'> {
  const settings: Record<string, unknown> = { ...upstream };
  for (const key of CREDENTIAL_KEYS) delete settings[key];
  return settings as Omit<EndpointConfig, 'name'>;
}

/** The settings that decide the grouping, in a form where key order does not matter. */
function canonicalJson(settings: Omit<EndpointConfig, 'name'>): string {
  return JSON.stringify(settings, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([left], [right]) => left.localeCompare(right)))
      : value,
  );
}

/** The base URL without user or password, which a URL may carry and a log must not. */
function describeBaseUrl(baseUrl: string | undefined): string {
  if (baseUrl === undefined) return '(default)';
  try {
    const url = new URL(baseUrl);
    url.username = '';
    url.password = '';
    return url.href.replace(/\/$/, '');
  } catch {
    return '(invalid base URL)';
  }
}

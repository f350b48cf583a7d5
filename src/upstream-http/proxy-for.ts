import type { ProxyRoute } from '../config/index.js';

/**
 * The proxy an upstream's connections go through, or null to connect directly: the route's proxy
 * for the origin's scheme, unless NO_PROXY names the host. NO_PROXY is read as curl and undici
 * read it: entries split by commas or spaces; `*` matches every host; `example.com` and
 * `.example.com` match the host and its subdomains; `host:port` matches that port only;
 * addresses match exactly.
 */
export function proxyFor(origin: URL, route: ProxyRoute | null): URL | null {
  if (route === null) return null;
  const proxy = origin.protocol === 'https:' ? route.https : route.http;
  if (proxy === null || bypassed(origin, route.noProxy)) return null;
  return new URL(proxy);
}

function bypassed(origin: URL, noProxy: string): boolean {
  const host = origin.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = origin.port === '' ? (origin.protocol === 'https:' ? '443' : '80') : origin.port;
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    const [, entryHost = entry, entryPort] = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry) ?? [];
    if (entryPort !== undefined && entryPort !== port) continue;
    const name = entryHost.replace(/^\[|\]$/g, '').replace(/^\*?\./, '');
    if (host === name || host.endsWith(`.${name}`)) return true;
  }
  return false;
}

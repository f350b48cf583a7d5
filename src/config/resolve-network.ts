import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from './config-error.js';
import type { NetworkConfig, ProxyRoute, ResolvedNetwork } from './config-schema.js';

export const DIRECT: ResolvedNetwork = { proxy: null, ca: null, cert: null, key: null, http2: false };

/**
 * An upstream's `network` block with the environment and the files read: the proxy route (from
 * HTTPS_PROXY / HTTP_PROXY / NO_PROXY for `env`, lower case first, as curl and undici read them),
 * and the PEM files, relative to the config file's folder. Every mistake is a ConfigError naming
 * the key, so a gateway never starts with a proxy or a certificate it cannot use.
 */
export function resolveNetwork(network: NetworkConfig, key: string, env: NodeJS.ProcessEnv, baseDirectory: string): ResolvedNetwork {
  const cert = readPem(network.cert_file, `${key}.cert_file`, baseDirectory, 'CERTIFICATE');
  const privateKey = readPem(network.key_file, `${key}.key_file`, baseDirectory, 'PRIVATE KEY');
  if ((cert === null) !== (privateKey === null)) {
    throw new ConfigError(
      `${key}.${cert === null ? 'cert_file' : 'key_file'}`,
      'is required with ' + (cert === null ? 'key_file' : 'cert_file') + ': a client certificate needs its key',
    );
  }
  return {
    proxy: proxyRoute(network.proxy, `${key}.proxy`, env),
    ca: readPem(network.ca_file, `${key}.ca_file`, baseDirectory, 'CERTIFICATE'),
    cert,
    key: privateKey,
    http2: network.http2,
  };
}

function proxyRoute(setting: string, key: string, env: NodeJS.ProcessEnv): ProxyRoute | null {
  if (setting === 'none') return null;
  if (setting !== 'env') return { http: checkedProxy(setting, key), https: checkedProxy(setting, key), noProxy: '' };
  const variable = (...names: string[]): [string, string] | null => {
    for (const name of names) {
      const value = env[name]?.trim();
      if (value) return [name, value];
    }
    return null;
  };
  const http = variable('http_proxy', 'HTTP_PROXY');
  const https = variable('https_proxy', 'HTTPS_PROXY') ?? http;
  if (http === null && https === null) return null;
  return {
    http: http === null ? null : checkedProxy(http[1], `${key} (${http[0]})`),
    https: https === null ? null : checkedProxy(https[1], `${key} (${https[0]})`),
    noProxy: variable('no_proxy', 'NO_PROXY')?.[1] ?? '',
  };
}

/** A proxy is reached over http:// or https:// (TLS to the proxy); `host:port` alone means http://. */
function checkedProxy(value: string, key: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ConfigError(key, 'is not a valid proxy URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(key, `a proxy is reached over http:// or https://, not ${url.protocol}//`);
  if (url.pathname !== '/' && url.pathname !== '') throw new ConfigError(key, 'a proxy URL has no path');
  return url.href;
}

function readPem(path: string | undefined, key: string, baseDirectory: string, kind: 'CERTIFICATE' | 'PRIVATE KEY'): string | null {
  if (path === undefined) return null;
  const file = resolve(baseDirectory, path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(key, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const expected = kind === 'CERTIFICATE' ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/;
  if (!expected.test(text)) throw new ConfigError(key, `${file} holds no PEM ${kind === 'CERTIFICATE' ? 'certificate' : 'private key'}`);
  return text;
}

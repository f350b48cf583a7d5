import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from './load-config.js';
import { resolveNetwork } from './resolve-network.js';

const directory = mkdtempSync(join(tmpdir(), 'switchyard-network-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const PEM_CERTIFICATE = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const PEM_KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';
writeFileSync(join(directory, 'corp-ca.pem'), PEM_CERTIFICATE);
writeFileSync(join(directory, 'client.pem'), PEM_CERTIFICATE);
writeFileSync(join(directory, 'client.key'), PEM_KEY);
writeFileSync(join(directory, 'not-pem.txt'), 'hello');

const network = (block: Record<string, unknown>) => ({ proxy: 'env', http2: false, ...block });
const resolve = (block: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => resolveNetwork(network(block), 'upstreams[0].network', env, directory);

describe('resolveNetwork', () => {
  it('connects directly with no proxy variables, or with proxy: none whatever the environment says', () => {
    expect(resolve({})).toEqual({ proxy: null, ca: null, cert: null, key: null, http2: false });
    expect(resolve({ proxy: 'none' }, { HTTPS_PROXY: 'http://proxy:3128' }).proxy).toBeNull();
  });

  it('reads the proxy variables as curl and undici do: lower case first, https falling back to http', () => {
    expect(resolve({}, { HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:2', NO_PROXY: 'internal' }).proxy).toEqual({
      http: null,
      https: 'http://lower:2/',
      noProxy: 'internal',
    });
    expect(resolve({}, { HTTP_PROXY: 'proxy.corp:3128' }).proxy).toEqual({ http: 'http://proxy.corp:3128/', https: 'http://proxy.corp:3128/', noProxy: '' });
  });

  it('takes a configured proxy for both schemes, an https:// one too', () => {
    expect(resolve({ proxy: 'https://user:pw@proxy.corp:443' }).proxy).toEqual({
      http: 'https://user:pw@proxy.corp/',
      https: 'https://user:pw@proxy.corp/',
      noProxy: '',
    });
  });

  it('refuses a proxy it cannot use, naming the key or the variable', () => {
    expect(() => resolve({}, { HTTPS_PROXY: 'socks5://proxy:1080' })).toThrow(
      'upstreams[0].network.proxy (HTTPS_PROXY): a proxy is reached over http:// or https://, not socks5://',
    );
    expect(() => resolve({ proxy: 'http://proxy:3128/some/path' })).toThrow('upstreams[0].network.proxy: a proxy URL has no path');
  });

  it('reads PEM files relative to the config file, and says which key names a missing or wrong one', () => {
    const resolved = resolve({ ca_file: './corp-ca.pem', cert_file: 'client.pem', key_file: 'client.key', http2: true });
    expect(resolved).toMatchObject({ ca: PEM_CERTIFICATE, cert: PEM_CERTIFICATE, key: PEM_KEY, http2: true });
    expect(() => resolve({ ca_file: 'missing.pem' })).toThrow(/^upstreams\[0\]\.network\.ca_file: cannot read .*missing\.pem: ENOENT$/);
    expect(() => resolve({ ca_file: 'not-pem.txt' })).toThrow(/ca_file: .*not-pem\.txt holds no PEM certificate/);
    expect(() => resolve({ cert_file: 'client.pem' })).toThrow('upstreams[0].network.key_file: is required with cert_file: a client certificate needs its key');
    expect(() => resolve({ key_file: 'client.key' })).toThrow('upstreams[0].network.cert_file: is required with key_file');
  });

  it('is applied by loadConfig to every entry, and an unknown network key is refused', () => {
    const configPath = join(directory, 'switchyard.yaml');
    writeFileSync(configPath, 'upstreams:\n  - { id: a, provider: openai, network: { ca_file: corp-ca.pem } }\n  - { id: b, provider: openai }\n');
    const { config } = loadConfig({ configPath, env: { HTTPS_PROXY: 'http://proxy:3128' } });
    expect(config.upstreams.map((upstream) => [upstream.network.ca, upstream.network.proxy?.https])).toEqual([
      [PEM_CERTIFICATE, 'http://proxy:3128/'],
      [null, 'http://proxy:3128/'],
    ]);
    writeFileSync(configPath, 'upstreams:\n  - { id: a, provider: openai, network: { ca: x } }\n');
    expect(() => loadConfig({ configPath, env: {} })).toThrow('upstreams[0].network.ca: unknown key');
  });
});

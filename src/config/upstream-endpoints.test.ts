import { describe, expect, it } from 'vitest';
import type { UpstreamConfig } from './config-schema.js';
import { DIRECT } from './resolve-network.js';
import { groupEndpoints } from './upstream-endpoints.js';

const defaults = {
  max_connections: 1024,
  max_response_bytes: 1 << 20,
  max_event_bytes: 1 << 20,
  timeouts: { connect_ms: 1_000, first_byte_ms: 5_000, idle_ms: 5_000 },
  network: DIRECT,
};

function entry(id: string, overrides: Partial<UpstreamConfig> = {}): UpstreamConfig {
  return { id, provider: 'openai', base_url: 'https://api.example.com/v1', api_key: `sk-${id}`, ...defaults, ...overrides };
}

describe('groupEndpoints', () => {
  it('puts entries that differ only in their credential on one endpoint, in config order', () => {
    const groups = groupEndpoints([entry('a'), entry('b', { headers: { 'openai-organization': 'org-b' } }), entry('c')]);
    expect(groups).toHaveLength(1);
    const [group] = groups;
    expect(group?.credentials.map((credential) => credential.id)).toEqual(['a', 'b', 'c']);
    expect(group?.endpoint).toEqual({ name: 'openai https://api.example.com/v1', provider: 'openai', base_url: 'https://api.example.com/v1', ...defaults });
    // The endpoint carries no credential.
    expect(JSON.stringify(group?.endpoint)).not.toContain('sk-');
  });

  it('gives entries with other settings endpoints of their own, even to one origin, and names them apart', () => {
    const groups = groupEndpoints([
      entry('a'),
      entry('small-pool', { max_connections: 4 }),
      entry('slow', { timeouts: { ...defaults.timeouts, first_byte_ms: 60_000 } }),
      entry('azure-like', { provider: 'azure' }),
      entry('b'),
    ]);
    expect(groups.map((group) => group.credentials.map((credential) => credential.id))).toEqual([['a', 'b'], ['small-pool'], ['slow'], ['azure-like']]);
    // A network setting of its own, too: another CA, a proxy.
    const proxied = groupEndpoints([
      entry('a'),
      entry('via-proxy', { network: { ...DIRECT, proxy: { http: 'http://proxy:3128/', https: 'http://proxy:3128/', noProxy: '' } } }),
      entry('b'),
    ]);
    expect(proxied.map((group) => group.credentials.length)).toEqual([2, 1]);
    expect(groups.map((group) => group.endpoint.name)).toEqual([
      'openai https://api.example.com/v1',
      'openai https://api.example.com/v1 #2',
      'openai https://api.example.com/v1 #3',
      'azure https://api.example.com/v1',
    ]);
  });

  it('keeps a provider key with the endpoint, whatever the order of the keys', () => {
    const first = { ...entry('a', { provider: 'local', base_url: undefined }), engine_threads: 2, cache_dir: './c' } as UpstreamConfig;
    const second = { cache_dir: './c', engine_threads: 2, ...entry('b', { provider: 'local', base_url: undefined }) } as UpstreamConfig;
    const third = { ...entry('c', { provider: 'local', base_url: undefined }), engine_threads: 4, cache_dir: './c' } as UpstreamConfig;
    const groups = groupEndpoints([first, second, third]);
    expect(groups.map((group) => group.credentials.map((credential) => credential.id))).toEqual([['a', 'b'], ['c']]);
    expect(groups[0]?.endpoint).toMatchObject({ name: 'local (default)', engine_threads: 2 });
  });

  it('never names an endpoint with the user or password its base URL carries', () => {
    const [group] = groupEndpoints([entry('a', { base_url: 'https://user:hunter2@proxy.example.com/v1' })]);
    expect(group?.endpoint.name).toBe('openai https://proxy.example.com/v1');
  });
});

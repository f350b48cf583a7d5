import { describe, expect, it } from 'vitest';
import type { UpstreamConfig } from '../../config/index.js';
import { LOCAL_UPSTREAM_KEYS } from '../local/local-upstream-keys.js';
import { checkUpstreamKeys, EMBEDDING_UPSTREAM_KEYS, readUpstreamKeys } from './upstream-keys.js';

function entry(extra: Record<string, unknown>): UpstreamConfig {
  return {
    id: 'u',
    provider: 'local',
    max_connections: 1,
    max_response_bytes: 1,
    max_event_bytes: 1,
    timeouts: { connect_ms: 1, first_byte_ms: 1, idle_ms: 1 },
    ...extra,
  } as UpstreamConfig;
}

describe('upstream keys', () => {
  it("reads the provider's own keys typed, converting text from ${VAR} as the loader does", () => {
    const keys = readUpstreamKeys(entry({ engine_threads: '3', publish_models: 'false', models_dir: './m' }), LOCAL_UPSTREAM_KEYS);
    expect(keys).toEqual({ engine_threads: 3, publish_models: false, models_dir: './m' });
  });

  it('reads only the keys asked for: an adapter built on another reads its part', () => {
    expect(readUpstreamKeys(entry({ api_version: 'x', max_embedding_inputs: 4 }), EMBEDDING_UPSTREAM_KEYS)).toEqual({ max_embedding_inputs: 4 });
  });

  it('refuses an unknown key and a bad value, naming the key alone', () => {
    expect(() => checkUpstreamKeys(entry({ engine_thread: 2 }), LOCAL_UPSTREAM_KEYS)).toThrow(
      /^engine_thread: unknown key for provider local \(its own keys: publish_models, models_dir, cache_dir, engine_threads, engine_queue\)$/,
    );
    expect(() => checkUpstreamKeys(entry({ engine_queue: -1 }), LOCAL_UPSTREAM_KEYS)).toThrow(
      /^engine_queue: expected integer to be greater or equal to 0, got -1$/,
    );
    expect(() => checkUpstreamKeys(entry({ engine_queue: 0, base_url: 'http://x' }), LOCAL_UPSTREAM_KEYS)).not.toThrow();
  });
});

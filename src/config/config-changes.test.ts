import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { configChanges, reloadedConfig } from './config-changes.js';
import { loadConfig } from './load-config.js';
import type { SwitchyardConfig } from './config-schema.js';

function config(document: Record<string, unknown>): SwitchyardConfig {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-changes-'));
  try {
    const configPath = join(directory, 'switchyard.yaml');
    writeFileSync(configPath, stringify(document));
    return loadConfig({ configPath, env: {} }).config;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const base = {
  server: { port: 8080 },
  upstreams: [
    { id: 'one', provider: 'openai', api_key: 'sk-secret-one' },
    { id: 'two', provider: 'openai', api_key: 'sk-secret-two', headers: { 'x-team': 'a' } },
  ],
  models: [{ id: 'm', type: 'chat', routes: [{ upstream: 'one', model: 'gpt' }] }],
};

describe('configChanges', () => {
  it('names each changed key by path, never its value, and splits what a reload applies from what needs a restart', () => {
    const running = config(base);
    const next = config({
      ...base,
      server: { port: 9090 },
      logging: { level: 'debug' },
      upstreams: [base.upstreams[0], { ...base.upstreams[1], api_key: 'sk-secret-three', headers: {} }, { id: 'three', provider: 'openai', api_key: 'sk-x' }],
      models: [{ id: 'm', type: 'chat', routes: [{ upstream: 'two', model: 'gpt', weight: 2 }] }],
    });
    const changes = configChanges(running, next);
    expect(changes).toEqual({
      applied: [
        'upstreams[1].api_key changed',
        'upstreams[1].headers.x-team removed',
        'upstreams[2] added',
        'models[0].routes[0].upstream changed',
        'models[0].routes[0].weight changed',
        'logging.level changed',
      ],
      needsRestart: ['server.port changed'],
    });
    expect(JSON.stringify(changes)).not.toContain('sk-');
    expect(configChanges(running, config(base))).toEqual({ applied: [], needsRestart: [] });
  });

  it('keeps what needs a restart as it was started', () => {
    const running = config(base);
    const next = config({ ...base, server: { port: 9090 }, logging: { level: 'warn', access: false }, models: [] });
    const reloaded = reloadedConfig(running, next);
    expect(reloaded.server.port).toBe(8080);
    expect(reloaded.logging).toEqual({ ...running.logging, level: 'warn' });
    expect(reloaded.models).toEqual([]);
  });
});

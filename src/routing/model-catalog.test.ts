import { describe, expect, it } from 'vitest';
import { ConfigError, type ModelConfig } from '../config/index.js';
import type { ChatProvider, ProviderAdapter } from '../providers/provider-adapter.js';
import { buildCatalog } from './model-catalog.js';

const chatOnly = { endpoint: 'openai test', capabilities: { chat: {} as ChatProvider }, close: async () => undefined } satisfies ProviderAdapter;
const credentials = new Map([
  ['chat-only', { credential: { id: 'chat-only', apiKey: undefined, headers: {} }, provider: 'openai' as const, adapter: chatOnly, maxInFlight: null }],
]);

describe('buildCatalog', () => {
  it('refuses at start a model routed to an upstream that cannot serve its type, naming the key', () => {
    const models: ModelConfig[] = [
      { id: 'ranker', type: 'rerank', routes: [{ upstream: 'chat-only', model: 'x', weight: 1, priority: 0 }], strategy: 'weighted' },
    ];
    const build = () => buildCatalog(models, credentials);
    expect(build).toThrow(ConfigError);
    expect(build).toThrow('models[0].routes[0].upstream: upstream "chat-only" (openai) cannot serve rerank models');
  });

  it('defaults owned_by to the first route provider and sums weights', () => {
    const models: ModelConfig[] = [
      {
        id: 'm',
        type: 'chat',
        routes: [
          { upstream: 'chat-only', model: 'x', weight: 2, priority: 0 },
          { upstream: 'chat-only', model: 'y', weight: 3, priority: 1 },
        ],
        strategy: 'ordered',
      },
    ];
    const model = buildCatalog(models, credentials, 1_700_000_000_000).get('m');
    expect(model).toMatchObject({ ownedBy: 'openai', created: 1_700_000_000, totalWeight: 5, strategy: 'ordered' });
    expect(model?.routes.map((route) => route.priority)).toEqual([0, 1]);
  });
});

describe('model aliases', () => {
  const chat = (id: string, aliases: string[]): ModelConfig => ({
    id,
    type: 'chat',
    aliases,
    routes: [{ upstream: 'chat-only', model: id, weight: 1, priority: 0 }],
    strategy: 'weighted',
  });
  const catalog = buildCatalog([chat('sonnet', ['claude-sonnet-5-5', 'claude-*']), chat('opus', ['claude-opus-*']), chat('claude-exact', [])], credentials);

  it.each([
    ['sonnet', 'sonnet'],
    ['claude-sonnet-5-5', 'sonnet'],
    ['claude-haiku-4-5-20251001', 'sonnet'],
    ['claude-opus-5-5', 'opus'],
    ['claude-exact', 'claude-exact'],
  ])('%s reaches %s: ids and exact aliases first, then the longest prefix', (name, id) => {
    expect(catalog.get(name)?.id).toBe(id);
  });

  it('reaches nothing by a name no id, alias or prefix takes', () => {
    expect(catalog.get('gpt-4o')).toBeUndefined();
  });
});

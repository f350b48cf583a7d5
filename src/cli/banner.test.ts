import { describe, expect, it } from 'vitest';
import { banner } from './banner.js';

const bootstrap = {
  secret: 'svc_first',
  record: {
    id: 'tok_first',
    name: 'bootstrap',
    team: 'default',
    project: null,
    secretHash: 'hash',
    displayPrefix: 'svc_firs',
    scopes: ['admin'],
    models: null,
    createdAt: 0,
    expiresAt: null,
    revokedAt: null,
    limits: {},
  },
};

describe('the start-up banner', () => {
  it('gives commands that run in the folder the gateway was started from (`switchyard` is on no PATH there: npx finds it)', () => {
    const lines = banner({
      url: 'http://127.0.0.1:8080',
      consoleUrl: 'http://127.0.0.1:8080/console/',
      configSource: null,
      models: [],
      offModels: [],
      bootstrap,
    }).join('\n');
    expect(lines).toContain('(or with `npx switchyard tokens create`), then revoke this one (`npx switchyard tokens revoke tok_first`).');
    expect(lines.replaceAll('npx switchyard ', '')).not.toMatch(/`switchyard /);
  });

  it('names the workers of serve --workers, and says nothing of workers for one process', () => {
    const facts = {
      url: 'http://127.0.0.1:8080',
      consoleUrl: null,
      configSource: null,
      models: [{ id: 'gpt-4o-mini', type: 'chat' as const }],
      offModels: [],
      bootstrap: null,
    };
    expect(banner(facts).join('\n')).not.toContain('workers:');
    expect(banner({ ...facts, workers: 4 })).toContain('  workers:         4 processes on one port, and a primary that restarts them');
  });
});

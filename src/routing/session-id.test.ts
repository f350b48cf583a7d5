import { describe, expect, it } from 'vitest';
import { resolveMessagesSession, resolveSession } from './session-id.js';

describe('resolveSession', () => {
  // Every combination of the three inputs: the highest precedence present wins (spec 5.3).
  const cases: Array<[string | undefined, string | undefined, string | undefined, { id: string; source: string } | null]> = [
    [undefined, undefined, undefined, null],
    ['h', undefined, undefined, { id: 'h', source: 'header' }],
    [undefined, 's', undefined, { id: 's', source: 'metadata.session_id' }],
    [undefined, undefined, 'k', { id: 'k', source: 'metadata.sticky_key' }],
    ['h', 's', undefined, { id: 'h', source: 'header' }],
    ['h', undefined, 'k', { id: 'h', source: 'header' }],
    [undefined, 's', 'k', { id: 's', source: 'metadata.session_id' }],
    ['h', 's', 'k', { id: 'h', source: 'header' }],
  ];
  for (const [header, sessionId, stickyKey, expected] of cases) {
    it(`header ${header ?? '-'}, session_id ${sessionId ?? '-'}, sticky_key ${stickyKey ?? '-'} → ${expected?.source ?? 'none'}`, () => {
      const metadata = { ...(sessionId === undefined ? {} : { session_id: sessionId }), ...(stickyKey === undefined ? {} : { sticky_key: stickyKey }) };
      expect(resolveSession(header, metadata)).toEqual(expected);
    });
  }

  it('skips empty values, takes the first of repeated headers, and cuts ids at 256 characters', () => {
    expect(resolveSession('  ', { session_id: '', sticky_key: 'k' })).toEqual({ id: 'k', source: 'metadata.sticky_key' });
    expect(resolveSession(['first', 'second'], null)).toEqual({ id: 'first', source: 'header' });
    expect(resolveSession('x'.repeat(300), undefined)?.id).toHaveLength(256);
  });
});

describe('resolveMessagesSession', () => {
  const userIdJson = JSON.stringify({ device_id: 'd', account_uuid: '', session_id: '55b65bc6-9f63-41b3-8d19-0742d91aa096' });
  it.each([
    [{ 'x-session-id': 'mine', 'x-claude-code-session-id': 'cc' }, { user_id: userIdJson }, { id: 'mine', source: 'header' }],
    [{ 'x-claude-code-session-id': 'cc' }, { user_id: userIdJson }, { id: 'cc', source: 'claude_code' }],
    [{}, { user_id: userIdJson }, { id: '55b65bc6-9f63-41b3-8d19-0742d91aa096', source: 'metadata.user_id' }],
    [
      {},
      { user_id: 'user_1f3a_account_9d2c1e7a-3c4b-4c1a-9b0e-5d2f8a7b6c5d_session_0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d' },
      { id: '0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d', source: 'metadata.user_id' },
    ],
    [{}, { user_id: 'someone' }, null],
    [{}, { user_id: '{not json' }, null],
    [{ 'x-claude-code-session-id': '  ' }, undefined, null],
  ])('headers %j, metadata %j → %j', (headers, metadata, expected) => {
    expect(resolveMessagesSession(headers, metadata)).toEqual(expected);
  });
});

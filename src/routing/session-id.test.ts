import { describe, expect, it } from 'vitest';
import { resolveSession } from './session-id.js';

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

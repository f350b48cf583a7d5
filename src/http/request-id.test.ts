import { describe, expect, it } from 'vitest';
import { generateRequestId } from './request-id.js';

describe('generateRequestId', () => {
  it('makes fixed-width ids that never repeat and sort in the order they were made', () => {
    const ids = Array.from({ length: 50_000 }, () => generateRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Lexical order is time order: the request log's key appends instead of landing anywhere.
    expect([...ids].sort()).toEqual(ids);
  });
});

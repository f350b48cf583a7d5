import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestingDepthExceeds, parseJsonBody } from './json-body.js';

const depth = (text: string, limit = MAX_JSON_DEPTH): boolean => nestingDepthExceeds(Buffer.from(text), limit);

describe('nestingDepthExceeds', () => {
  it('counts objects and arrays together, up to the limit and one past it', () => {
    expect(depth('[{"a":[1]}]', 3)).toBe(false);
    expect(depth('[{"a":[[1]]}]', 3)).toBe(true);
    expect(depth('['.repeat(64) + ']'.repeat(64))).toBe(false);
    expect(depth('['.repeat(65) + ']'.repeat(65))).toBe(true);
  });

  it('does not count brackets inside strings, whatever escapes precede the quotes', () => {
    expect(depth(`{"a":"${'[{'.repeat(100)}"}`, 2)).toBe(false);
    expect(depth(String.raw`{"a":"\"[[[[\\","b":"x"}`, 2)).toBe(false);
    // `\\"` ends the string (the backslash is escaped); what follows is structure again.
    expect(depth(String.raw`{"a":"\\"}` + '', 1)).toBe(false);
    expect(depth(String.raw`["\\", [[[1]]]]`, 3)).toBe(true);
    expect(depth(String.raw`["\"", "[[[["]`, 1)).toBe(false);
    expect(depth('{"a":"é中🚀[[["}', 1)).toBe(false);
  });
});

describe('parseJsonBody', () => {
  it('refuses empty, too deep, not JSON and prototype keys with the body errors', () => {
    expect(() => parseJsonBody(Buffer.alloc(0))).toThrow(expect.objectContaining({ code: 'invalid_json' }));
    expect(() => parseJsonBody(Buffer.from('['.repeat(6_000) + ']'.repeat(6_000)))).toThrow(expect.objectContaining({ code: 'invalid_body', status: 400 }));
    expect(() => parseJsonBody(Buffer.from('{"a":'))).toThrow(expect.objectContaining({ code: 'invalid_json' }));
    expect(() => parseJsonBody(Buffer.from('{"__proto__":{"x":1}}'))).toThrow(expect.objectContaining({ code: 'invalid_json' }));
    expect(parseJsonBody(Buffer.from('{"model":"m","n":[1,{"b":null}]}'))).toEqual({ model: 'm', n: [1, { b: null }] });
  });
});

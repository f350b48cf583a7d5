import { describe, expect, it } from 'vitest';
import { asObject, isObject, parseJson, parseJsonObject } from './json.js';

describe('isObject and asObject', () => {
  it('accept objects only: not arrays, null or scalars', () => {
    for (const value of [{}, { a: 1 }, Object.create(null) as object]) {
      expect(isObject(value)).toBe(true);
      expect(asObject(value)).toBe(value);
    }
    for (const value of [[], null, undefined, 0, 'x', true]) {
      expect(isObject(value)).toBe(false);
      expect(asObject(value)).toBeUndefined();
    }
  });
});

describe('parseJson and parseJsonObject', () => {
  it('parse any JSON value, and tell text that is not JSON as undefined', () => {
    expect(parseJson('[1,2]')).toEqual([1, 2]);
    expect(parseJson('null')).toBeNull();
    expect(parseJson('<html>')).toBeUndefined();
    expect(parseJson('')).toBeUndefined();
  });

  it('give an object, or null for anything else', () => {
    expect(parseJsonObject('{"error":{"message":"x"}}')).toEqual({ error: { message: 'x' } });
    for (const text of ['[{}]', 'null', '"text"', '42', 'not json']) expect(parseJsonObject(text)).toBeNull();
  });
});

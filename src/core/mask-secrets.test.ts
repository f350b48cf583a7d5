import { describe, expect, it } from 'vitest';
import { maskSecrets } from './mask-secrets.js';

describe('maskSecrets', () => {
  it('cuts what looks like a key or a token, and leaves the words around it', () => {
    expect(maskSecrets('Incorrect API key provided: sk-proj-abcdefghijklmnop. See docs.')).toBe('Incorrect API key provided: sk-p…[redacted]. See docs.');
    expect(maskSecrets('key sk-ant-api03-abcdefghijkl refused')).toBe('key sk-a…[redacted] refused');
    expect(maskSecrets('API key AIzaSyA1234567890abcdefghijklmnop invalid')).toBe('API key AIza…[redacted] invalid');
    expect(maskSecrets('sent Authorization: Bearer abcdef0123456789xyz')).toBe('sent Authorization: Bearer abcd…[redacted]');
    expect(maskSecrets('token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl')).toBe('token eyJh…[redacted]');
  });

  it('leaves ordinary messages alone, masked keys an upstream already cut included', () => {
    const text = 'Rate limit reached for gpt-4o in organization org-abc on requests per min. Incorrect API key provided: AIzaSyDQ***xvs8.';
    expect(maskSecrets(text)).toBe(text);
  });
});

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box.js';

const hexKey = randomBytes(32).toString('hex');

describe('SecretBox', () => {
  it('opens what it sealed, with a fresh nonce each time', () => {
    const box = SecretBox.fromText(hexKey) as SecretBox;
    const sealed = box.seal('{"refresh_token":"rt-1"}', 'chatgpt-alice');
    expect(sealed).not.toContain('rt-1');
    expect(box.seal('{"refresh_token":"rt-1"}', 'chatgpt-alice')).not.toBe(sealed);
    expect(box.open(sealed, 'chatgpt-alice')).toBe('{"refresh_token":"rt-1"}');
  });

  it('takes the key as 64 hex digits or as base64 of 32 bytes, and nothing else', () => {
    const bytes = randomBytes(32);
    const fromBase64 = SecretBox.fromText(bytes.toString('base64')) as SecretBox;
    const fromHex = SecretBox.fromText(bytes.toString('hex')) as SecretBox;
    expect(fromHex.open(fromBase64.seal('x', 'c'), 'c')).toBe('x');
    for (const bad of ['', 'short', 'z'.repeat(64), randomBytes(16).toString('hex'), randomBytes(31).toString('base64')])
      expect(SecretBox.fromText(bad)).toBeNull();
  });

  it('refuses another key, another record, and changed bytes', () => {
    const box = SecretBox.fromText(hexKey) as SecretBox;
    const sealed = box.seal('secret', 'a');
    expect(() => (SecretBox.fromText(randomBytes(32).toString('hex')) as SecretBox).open(sealed, 'a')).toThrow(/does not open/);
    expect(() => box.open(sealed, 'b')).toThrow(/does not open/);
    const bytes = Buffer.from(sealed, 'base64');
    bytes.writeUInt8((bytes.at(-1) as number) ^ 1, bytes.length - 1);
    expect(() => box.open(bytes.toString('base64'), 'a')).toThrow(/does not open/);
    expect(() => box.open('AAAA', 'a')).toThrow(/known version/);
  });
});

import { describe, expect, it } from 'vitest';
import { digestsEqual, generateSecret, hashSecret, looksLikeToken } from './token-secret.js';

describe('token secrets', () => {
  it('hashes to the sha256 hex digest', () => {
    // sha256("abc"), the FIPS 180-2 test vector.
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashSecret('svc_abc')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSecret('svc_abc')).not.toBe(hashSecret('svc_abd'));
  });

  it('compares digests exactly', () => {
    const digest = hashSecret(generateSecret('svc_'));
    expect(digestsEqual(digest, digest.slice())).toBe(true);
    expect(digestsEqual(digest, `${digest.slice(0, 63)}${digest.endsWith('0') ? '1' : '0'}`)).toBe(false);
    expect(digestsEqual(digest, digest.slice(1))).toBe(false);
  });

  it('recognises the token shape and nothing else', () => {
    const secret = generateSecret('svc_');
    expect(looksLikeToken(secret, 'svc_')).toBe(true);
    expect(looksLikeToken(secret.replace('svc_', 'abc_'), 'svc_')).toBe(false);
    expect(looksLikeToken(`${secret.slice(0, -1)}-`, 'svc_')).toBe(false);
    expect(looksLikeToken(secret.slice(0, -1), 'svc_')).toBe(false);
  });
});

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Version byte, 12-byte nonce, 16-byte tag: what `seal` puts before the ciphertext. */
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Secrets at rest (OAuth tokens of upstream accounts) under one 32-byte key, AES-256-GCM: each
 * value gets a fresh random nonce, and the tag makes a changed or truncated value fail to open
 * instead of decrypting to garbage. `context` (the record's id) is bound as associated data, so a
 * sealed value copied onto another record does not open there either.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** The key as `SWITCHYARD_SECRET_KEY` gives it: 64 hex digits, or base64 of 32 bytes. Null when it is neither. */
  static fromText(text: string): SecretBox | null {
    const trimmed = text.trim();
    const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
      ? Buffer.from(trimmed, 'hex')
      : /^[A-Za-z0-9+/_-]{42,44}={0,2}$/.test(trimmed)
        ? Buffer.from(trimmed, 'base64')
        : null;
    return key !== null && key.length === 32 ? new SecretBox(key) : null;
  }

  /** base64 of version, nonce, tag and ciphertext. */
  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.of(VERSION), nonce, cipher.getAuthTag(), ciphertext]).toString('base64');
  }

  /** The plaintext; throws when the value was not sealed by this key for this context, or was changed. */
  open(sealed: string, context: string): string {
    const bytes = Buffer.from(sealed, 'base64');
    if (bytes.length < 1 + NONCE_BYTES + TAG_BYTES || bytes[0] !== VERSION) throw new Error('not a sealed secret of a known version');
    const nonce = bytes.subarray(1, 1 + NONCE_BYTES);
    const tag = bytes.subarray(1 + NONCE_BYTES, 1 + NONCE_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonce);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(bytes.subarray(1 + NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('the sealed secret does not open with this key (another SWITCHYARD_SECRET_KEY, another record, or changed bytes)');
    }
  }
}

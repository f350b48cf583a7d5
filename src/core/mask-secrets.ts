/**
 * What looks like a credential in text an upstream wrote (its error messages sometimes quote the
 * key it was sent, or a token): OpenAI and Anthropic keys, Google API keys, Bearer tokens, JWTs.
 * The text goes to logs and to operators; the secret must not.
 */
const SECRET_PATTERN =
  /\b(?:sk-[A-Za-z0-9_-]{8,}|sk_[A-Za-z0-9_]{8,}|AIza[0-9A-Za-z_-]{20,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+)|(?<=Bearer\s+)[A-Za-z0-9._~+/-]{8,}=*/g;

/** The text with every credential-like word cut to its first four characters and `…[redacted]`. */
export function maskSecrets(text: string): string {
  return text.replace(SECRET_PATTERN, (secret) => `${secret.slice(0, 4)}…[redacted]`);
}

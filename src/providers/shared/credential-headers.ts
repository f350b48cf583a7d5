import type { Credential } from '../provider-adapter.js';

/**
 * The request headers of each credential, built once per credential object: a call merges no
 * objects, and a rotated credential (a new object) gets new headers while the old ones are
 * collected with it.
 */
export class CredentialHeaders {
  private readonly built = new WeakMap<Credential, Readonly<Record<string, string>>>();

  constructor(private readonly build: (credential: Credential) => Record<string, string>) {}

  of(credential: Credential): Readonly<Record<string, string>> {
    let headers = this.built.get(credential);
    if (headers === undefined) {
      headers = Object.freeze(this.build(credential));
      this.built.set(credential, headers);
    }
    return headers;
  }
}

/** `content-type: application/json`, the key as a Bearer token when there is one, then the credential's extra headers. */
export function bearerHeaders(credential: Credential): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(credential.apiKey ? { authorization: `Bearer ${credential.apiKey}` } : {}),
    ...credential.headers,
  };
}

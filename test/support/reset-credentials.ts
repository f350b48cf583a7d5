import type { Gateway } from '../../src/gateway.js';

/**
 * Every credential back in service, as an operator's reset would do: suites that make one
 * credential fail on purpose, request after request, test the mapping of each failure, not the
 * cooldown it opens (test/e2e/credential-pools.test.ts tests that).
 */
export function resetCredentials(gateway: Gateway): void {
  for (const { id } of gateway.credentials.list()) {
    gateway.credentials.enable(id);
    gateway.credentials.reset(id);
  }
}

import { DIRECT, type EndpointConfig } from '../../src/config/index.js';
import type { AnswerHead, Attempt, Credential } from '../../src/providers/provider-adapter.js';

/** A credential as the gateway builds one from an `upstreams[]` entry. */
export function testCredential(id = 'test', apiKey?: string, headers: Record<string, string> = {}): Credential {
  return { id, apiKey, headers };
}

/** An attempt of `credential` that keeps what the adapter told of the upstream's answer. */
export function testAttempt(credential: Credential = testCredential()): Attempt & { statusCode: number | null; answerHead: AnswerHead | null } {
  return {
    credential,
    statusCode: null,
    answerHead: null,
    answered(statusCode, head) {
      this.statusCode = statusCode;
      this.answerHead = head;
    },
  };
}

/** An endpoint with the config's defaults and short timeouts; `overrides` sets the rest. */
export function testEndpoint(overrides: Partial<EndpointConfig> & Pick<EndpointConfig, 'provider'>): EndpointConfig {
  return {
    name: `${overrides.provider} test`,
    max_connections: 8,
    max_response_bytes: 1 << 20,
    max_event_bytes: 1 << 20,
    timeouts: { connect_ms: 1_000, first_byte_ms: 5_000, idle_ms: 5_000 },
    network: DIRECT,
    ...overrides,
  };
}

import { Type } from '@sinclair/typebox';
import { EMBEDDING_UPSTREAM_KEYS } from '../shared/upstream-keys.js';

/** An Azure OpenAI upstream's own keys. */
export const AZURE_UPSTREAM_KEYS = {
  ...EMBEDDING_UPSTREAM_KEYS,
  api_version: Type.Optional(Type.String({ minLength: 1, documentedDefault: '`2024-10-21`', description: 'the `api-version` query parameter' })),
};

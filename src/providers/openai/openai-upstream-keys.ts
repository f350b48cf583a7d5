import { Type } from '@sinclair/typebox';
import { EMBEDDING_UPSTREAM_KEYS } from '../shared/upstream-keys.js';

/** How `/v1/responses` reaches an OpenAI-compatible upstream (docs/responses-api.md). */
export const RESPONSES_MODES = ['passthrough', 'convert', 'auto'] as const;
export type ResponsesMode = (typeof RESPONSES_MODES)[number];

/** An OpenAI-compatible upstream's own keys. */
export const OPENAI_UPSTREAM_KEYS = {
  ...EMBEDDING_UPSTREAM_KEYS,
  responses: Type.Optional(
    Type.Union(
      RESPONSES_MODES.map((mode) => Type.Literal(mode)),
      {
        documentedDefault: "`passthrough` for OpenAI's own `base_url`, `auto` for any other",
        description:
          'how `/v1/responses` reaches the server: `passthrough` (to its `/responses`), `convert` (to chat completions), `auto` (passed through until the server answers 404 or 405 there, then converted, that request included) (docs/responses-api.md)',
      },
    ),
  ),
};

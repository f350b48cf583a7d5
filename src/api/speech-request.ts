import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError } from '../errors/index.js';
import { toIssue, validationError } from './validation-issues.js';

export const MAX_SPEECH_CHARACTERS = 4096;

/** The content type each output format is sent with. */
export const SPEECH_CONTENT_TYPES = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
} as const;

export type SpeechFormat = keyof typeof SPEECH_CONTENT_TYPES;

export const SpeechRequestSchema = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    input: Type.String({ minLength: 1 }),
    voice: Type.Optional(Type.String({ minLength: 1 })),
    response_format: Type.Optional(Type.Union((Object.keys(SPEECH_CONTENT_TYPES) as SpeechFormat[]).map((format) => Type.Literal(format)))),
    speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
    instructions: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export type SpeechRequest = Static<typeof SpeechRequestSchema>;

const checker = TypeCompiler.Compile(SpeechRequestSchema);

export function parseSpeechRequest(body: unknown): SpeechRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_body', 'The request body must be a JSON object.');
  }
  if (!checker.Check(body)) throw validationError([...checker.Errors(body)].slice(0, 20).map(toIssue));
  const characters = countCharacters(body.input);
  if (characters > MAX_SPEECH_CHARACTERS) {
    throw validationError([
      { loc: ['body', 'input'], msg: `String should have at most ${MAX_SPEECH_CHARACTERS} characters, got ${characters}`, type: 'string_too_long' },
    ]);
  }
  return body;
}

/** Unicode characters (code points), as JSON Schema counts them: an emoji is one, not two. */
function countCharacters(text: string): number {
  if (text.length <= MAX_SPEECH_CHARACTERS) return text.length;
  let count = 0;
  for (const _character of text) count++;
  return count;
}

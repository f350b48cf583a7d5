import { LocalEngineError } from '../local-engine-error.js';

// The only acoustic and language model Debian ships for pocketsphinx is US English.
const ENGLISH = /^(en(?:[-_][a-z0-9]{2,8})*|english)$/i;

/** Accept an omitted/empty language, `en`, a regional tag like `en-GB`, or `english`; refuse the rest. */
export function requireEnglish(language: string | undefined): void {
  const trimmed = language?.trim() ?? '';
  if (trimmed === '' || ENGLISH.test(trimmed)) return;
  // Echo the caller's value back only when it looks like a language tag, so the message stays safe.
  const shown = /^[a-z]{2,3}(?:[-_][a-z0-9]{2,8})*$/i.test(trimmed) ? `'${trimmed}'` : 'requested';
  throw new LocalEngineError('invalid_request', `local transcription supports English only (language ${shown} is not supported; omit it or send 'en')`);
}

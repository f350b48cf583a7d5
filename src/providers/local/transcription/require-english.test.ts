import { describe, expect, it } from 'vitest';
import { LocalEngineError } from '../local-engine-error.js';
import { requireEnglish } from './require-english.js';

describe('requireEnglish', () => {
  it('accepts English or no language at all', () => {
    for (const language of [undefined, '', ' ', 'en', 'EN', 'en-GB', 'en_US', 'english']) {
      expect(() => requireEnglish(language)).not.toThrow();
    }
  });

  it('refuses any other language as an invalid request naming it', () => {
    let caught: unknown;
    try {
      requireEnglish('fr');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(LocalEngineError);
    expect((caught as LocalEngineError).kind).toBe('invalid_request');
    expect((caught as LocalEngineError).message).toBe("local transcription supports English only (language 'fr' is not supported; omit it or send 'en')");
  });

  it('does not echo a value that is not a language tag', () => {
    expect(() => requireEnglish('<script>alert(1)</script>')).toThrow(
      "local transcription supports English only (language requested is not supported; omit it or send 'en')",
    );
  });
});

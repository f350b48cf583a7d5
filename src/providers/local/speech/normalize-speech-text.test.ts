import { describe, expect, it } from 'vitest';
import { normalizeSpeechText } from './normalize-speech-text.js';

describe('normalizeSpeechText', () => {
  it('brings typographic punctuation to ASCII', () => {
    expect(normalizeSpeechText('\u201CHi,\u201D she said\u2014it\u2019s late\u2026')).toBe('"Hi," she said - it\'s late...');
  });

  it('strips accents and turns odd spaces into plain ones', () => {
    expect(normalizeSpeechText('caf\u00E9 na\u00EFve\u00A0r\u00E9sum\u00E9')).toBe('cafe naive resume');
  });

  it('leaves plain text and other scripts alone', () => {
    expect(normalizeSpeechText('Plain text, 42.')).toBe('Plain text, 42.');
    expect(normalizeSpeechText('\u65E5\u672C')).toBe('\u65E5\u672C');
  });
});

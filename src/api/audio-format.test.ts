import { describe, expect, it } from 'vitest';
import { detectAudioFormat } from './audio-format.js';

const bytes = (...values: Array<number | string>) =>
  Uint8Array.from(values.flatMap((value) => (typeof value === 'string' ? [...value].map((character) => character.charCodeAt(0)) : [value])));

describe('detectAudioFormat', () => {
  it('recognises each container by its first bytes', () => {
    expect(detectAudioFormat(bytes('RIFF', 0, 0, 0, 0, 'WAVEfmt '))).toBe('wav');
    expect(detectAudioFormat(bytes('ID3', 4, 0))).toBe('mp3');
    expect(detectAudioFormat(bytes(0xff, 0xfb, 0x90, 0x64))).toBe('mp3');
    expect(detectAudioFormat(bytes(0xff, 0xf3, 0x48, 0xc4))).toBe('mp3');
    expect(detectAudioFormat(bytes('fLaC', 0, 0, 0, 34))).toBe('flac');
    expect(detectAudioFormat(bytes('OggS', 0, 2))).toBe('ogg');
    expect(detectAudioFormat(bytes(0x1a, 0x45, 0xdf, 0xa3, 0x9f))).toBe('webm');
    expect(detectAudioFormat(bytes(0, 0, 0, 0x20, 'ftypM4A '))).toBe('m4a');
  });

  it('refuses what is not audio, whatever it is called', () => {
    expect(detectAudioFormat(bytes('%PDF-1.7'))).toBeNull();
    expect(detectAudioFormat(bytes('RIFF', 0, 0, 0, 0, 'AVI '))).toBeNull();
    expect(detectAudioFormat(bytes(0xff, 0xe8, 0, 0))).toBeNull();
    expect(detectAudioFormat(bytes(0xff))).toBeNull();
    expect(detectAudioFormat(new Uint8Array())).toBeNull();
  });
});

export type AudioFormat = 'wav' | 'mp3' | 'flac' | 'ogg' | 'webm' | 'm4a';

/**
 * The container an audio file is in, judged by its first bytes, never by its name: RIFF/WAVE,
 * MP3 (an ID3 tag or an MPEG audio frame sync), fLaC, OggS, EBML (WebM/Matroska), or an ISO
 * base-media `ftyp` box (M4A/MP4). Null for anything else.
 */
export function detectAudioFormat(head: Uint8Array): AudioFormat | null {
  const ascii = (start: number, end: number) => String.fromCharCode(...head.subarray(start, end));
  if (head.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (head.length >= 4 && ascii(0, 4) === 'fLaC') return 'flac';
  if (head.length >= 4 && ascii(0, 4) === 'OggS') return 'ogg';
  if (head.length >= 4 && head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return 'webm';
  if (head.length >= 8 && ascii(4, 8) === 'ftyp') return 'm4a';
  if (head.length >= 3 && ascii(0, 3) === 'ID3') return 'mp3';
  // MPEG audio frame: 11 sync bits, a valid version (not 01) and a layer (not 00).
  if (
    head.length >= 2 &&
    head[0] === 0xff &&
    ((head[1] as number) & 0xe0) === 0xe0 &&
    ((head[1] as number) & 0x18) !== 0x08 &&
    ((head[1] as number) & 0x06) !== 0
  ) {
    return 'mp3';
  }
  return null;
}

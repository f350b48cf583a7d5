import type { RecognizedWord } from './pocketsphinx-output.js';

export interface TranscriptionSegment {
  start: number;
  end: number;
  text: string;
}

// A pause this long between two words is where a subtitle line or a sentence usually breaks.
const PAUSE_SECONDS = 0.5;
// Whisper's segments never exceed its 30 s window; subtitle players also expect short cues.
const MAX_SEGMENT_SECONDS = 30;

/** Cut the word stream into segments at pauses, and wherever a segment would outgrow 30 s. */
export function groupIntoSegments(words: readonly RecognizedWord[]): TranscriptionSegment[] {
  const segments: TranscriptionSegment[] = [];
  let current: RecognizedWord[] = [];
  const close = (): void => {
    const first = current[0];
    const last = current.at(-1);
    if (first !== undefined && last !== undefined) {
      segments.push({ start: first.start, end: last.end, text: current.map((word) => word.word).join(' ') });
    }
    current = [];
  };
  for (const word of words) {
    const first = current[0];
    const last = current.at(-1);
    if (first !== undefined && last !== undefined) {
      const pause = word.start - last.end;
      if (pause > PAUSE_SECONDS || word.end - first.start > MAX_SEGMENT_SECONDS) close();
    }
    current.push(word);
  }
  close();
  return segments;
}

import { describe, expect, it } from 'vitest';
import { groupIntoSegments } from './group-segments.js';

describe('groupIntoSegments', () => {
  it('starts a new segment after a pause longer than half a second', () => {
    const segments = groupIntoSegments([
      { word: 'hello', start: 0.5, end: 0.9 },
      { word: 'there', start: 1.2, end: 1.6 }, // 0.3 s pause: same segment
      { word: 'next', start: 2.2, end: 2.5 }, // 0.6 s pause: new segment
    ]);
    expect(segments).toEqual([
      { start: 0.5, end: 1.6, text: 'hello there' },
      { start: 2.2, end: 2.5, text: 'next' },
    ]);
  });

  it('never lets a segment run past 30 seconds of continuous speech', () => {
    const words = Array.from({ length: 100 }, (_, index) => ({ word: `w${index}`, start: index * 0.7, end: index * 0.7 + 0.6 }));
    const segments = groupIntoSegments(words);
    expect(segments.length).toBeGreaterThan(2);
    for (const segment of segments) expect(segment.end - segment.start).toBeLessThanOrEqual(30);
    expect(segments.map((segment) => segment.text).join(' ')).toBe(words.map((word) => word.word).join(' '));
  });

  it('makes no segment from no words', () => {
    expect(groupIntoSegments([])).toEqual([]);
  });
});

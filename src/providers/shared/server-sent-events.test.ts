import { describe, expect, it } from 'vitest';
import { ServerSentEventDecoder, type ServerSentEvent } from './server-sent-events.js';

function decodeInPieces(text: string, sizes: number[]): ServerSentEvent[] {
  const bytes = new TextEncoder().encode(text);
  const decoder = new ServerSentEventDecoder();
  const events: ServerSentEvent[] = [];
  let offset = 0;
  for (let index = 0; offset < bytes.length; index++) {
    const size = sizes[index % sizes.length] as number;
    events.push(...decoder.push(bytes.subarray(offset, offset + size)));
    offset += size;
  }
  events.push(...decoder.end());
  return events;
}

const STREAM = ': keep-alive\n\ndata: {"a":"héllo 你好 🚀"}\n\nevent: ping\ndata: {}\n\n: comment\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n';
const EXPECTED: ServerSentEvent[] = [
  { event: null, data: '{"a":"héllo 你好 🚀"}' },
  { event: 'ping', data: '{}' },
  { event: null, data: 'line one\nline two' },
  { event: null, data: '[DONE]' },
];

describe('ServerSentEventDecoder', () => {
  for (const [name, lineEnd] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ] as const) {
    it(`decodes ${name} line ends split at every byte-size pattern`, () => {
      const text = STREAM.replace(/\n/g, lineEnd);
      for (const sizes of [[1], [2], [3], [7], [13, 1, 29], [1024]]) {
        expect(decodeInPieces(text, sizes)).toEqual(EXPECTED);
      }
    });
  }

  it('handles a CRLF split between two pushes without seeing an extra blank line', () => {
    const decoder = new ServerSentEventDecoder();
    const encoder = new TextEncoder();
    expect(decoder.push(encoder.encode('data: a\r'))).toEqual([]);
    expect(decoder.push(encoder.encode('\ndata: b\r'))).toEqual([]);
    expect(decoder.push(encoder.encode('\n\r\n'))).toEqual([{ event: null, data: 'a\nb' }]);
  });

  it('strips one leading space only, keeps fields without a value, and ignores unknown fields', () => {
    const events = decodeInPieces('data:  two spaces\nid: 7\nretry: 10\ndata\n\n', [5]);
    expect(events).toEqual([{ event: null, data: ' two spaces\n' }]);
  });

  it('drops an event that the stream cut off before its blank line', () => {
    expect(decodeInPieces('data: complete\n\ndata: cut', [4])).toEqual([{ event: null, data: 'complete' }]);
  });

  it('parses one line of 40 MB arriving in 64 KB pieces, each byte scanned once', () => {
    const decoder = new ServerSentEventDecoder(64 * 1024 * 1024);
    const piece = new Uint8Array(64 * 1024).fill(0x61);
    decoder.push(new TextEncoder().encode('data: '));
    // The defect rescanned the whole line on each piece: 640 pieces took minutes.
    for (let index = 0; index < 640; index++) expect(decoder.push(piece)).toEqual([]);
    const [event] = decoder.push(new TextEncoder().encode('\n\n'));
    expect(event?.data.length).toBe(640 * 64 * 1024);
  });

  it('fails an event larger than its cap, whether one line or many', () => {
    const encoder = new TextEncoder();
    const oneLine = new ServerSentEventDecoder(1_000);
    expect(() => oneLine.push(encoder.encode(`data: ${'a'.repeat(1_001)}`))).toThrow(/larger than 1000 bytes/);
    const manyLines = new ServerSentEventDecoder(1_000);
    expect(() => manyLines.push(encoder.encode(`data: ${'a'.repeat(400)}\n`.repeat(3)))).toThrow(
      expect.objectContaining({ code: 'upstream_invalid_response' }),
    );
    // Under the cap, events of any number keep coming.
    const underCap = new ServerSentEventDecoder(1_000);
    for (let index = 0; index < 100; index++) expect(underCap.push(encoder.encode(`data: ${'a'.repeat(900)}\n\n`))).toHaveLength(1);
  });
});

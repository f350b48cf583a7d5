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
});

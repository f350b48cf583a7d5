import { Http1ProtocolError } from './http1-errors.js';

/** What a parsed response hands on, in order: its head once, its body bytes, then its end. */
export interface ResponseSink {
  onHead(statusCode: number, head: ResponseHead): void;
  onBody(chunk: Buffer): void;
  onEnd(): void;
}

/** The largest status line plus headers accepted (Node's own server default is 16 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;
const MAX_CHUNK_LINE_BYTES = 4 * 1024;
const MAX_CHUNK_SIZE_DIGITS = 15;

// biome-ignore lint/suspicious/noConstEnum: local to this file, so tsc inlines it under isolatedModules; the parser reads it once per byte run
const enum State {
  Head,
  LengthBody,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

const LF = 0x0a;
const CR = 0x0d;
const SEMICOLON = 0x3b;

/**
 * The header block of a response, kept as the text it arrived as and read into an object only
 * when asked: a successful answer's headers are seldom read, and real upstreams send twenty or
 * more (rate limits, request ids, CDN headers).
 */
export class ResponseHead {
  private parsed: Record<string, string | string[]> | null = null;

  constructor(
    /** The header lines after the status line, `\r\n`-separated, without the closing blank line. */
    readonly text: string,
  ) {}

  /** Node's shape: lower-case names, repeated headers joined by `, ` except `set-cookie`, which is a list. */
  get headers(): Record<string, string | string[]> {
    return (this.parsed ??= parseHeaderLines(this.text));
  }
}

/**
 * An incremental HTTP/1.1 response parser (RFC 9112) for one connection: status line and headers,
 * then the body framed by `Transfer-Encoding: chunked`, `Content-Length`, or the connection's close.
 * Interim 1xx responses are skipped. It is strict where leniency would let a confused upstream
 * desynchronise the connection (conflicting lengths, bad chunk sizes, bytes after the end), and
 * such a response is an error; the connection is then never reused.
 */
export class ResponseParser {
  private state = State.Head;
  private head: Buffer | null = null;
  private headSearchFrom = 0;
  private remaining = 0;
  private line: Buffer | null = null;
  private completeLine: Buffer | null = null;
  /** False when the connection must close after this response (HTTP/1.0, `Connection: close`, read-until-close). */
  keepAlive = true;
  /** Bytes of this response received so far (head included): none means the upstream never answered. */
  receivedBytes = 0;
  /** `Keep-Alive: timeout=N` of the last response, in milliseconds: how long the upstream keeps an idle connection. */
  keepAliveHintMs: number | null = null;

  constructor(private readonly sink: ResponseSink) {}

  get done(): boolean {
    return this.state === State.Done;
  }

  /** True while the body is framed by the connection's close: the end of input is its end. */
  get readsUntilClose(): boolean {
    return this.state === State.UntilClose;
  }

  /** Starts a new response on the same connection. */
  reset(): void {
    this.state = State.Head;
    this.head = null;
    this.headSearchFrom = 0;
    this.remaining = 0;
    this.line = null;
    this.completeLine = null;
    this.keepAlive = true;
    this.receivedBytes = 0;
    this.keepAliveHintMs = null;
  }

  /** Feeds bytes from the socket. Throws Http1ProtocolError on a malformed response. */
  execute(chunk: Buffer): void {
    this.receivedBytes += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      switch (this.state) {
        case State.Head:
          offset = this.readHead(chunk, offset);
          break;
        case State.LengthBody: {
          const take = Math.min(this.remaining, chunk.length - offset);
          this.remaining -= take;
          this.sink.onBody(offset === 0 && take === chunk.length ? chunk : chunk.subarray(offset, offset + take));
          offset += take;
          if (this.remaining === 0) this.finish();
          break;
        }
        case State.ChunkSize:
          offset = this.readLine(chunk, offset);
          if (this.completeLine !== null) this.chunkSize(this.completeLine);
          break;
        case State.ChunkData: {
          const take = Math.min(this.remaining, chunk.length - offset);
          this.remaining -= take;
          this.sink.onBody(chunk.subarray(offset, offset + take));
          offset += take;
          if (this.remaining === 0) this.state = State.ChunkDataEnd;
          break;
        }
        case State.ChunkDataEnd:
          offset = this.readLine(chunk, offset);
          if (this.completeLine === null) break;
          if (this.completeLine.length !== 0) throw new Http1ProtocolError('chunk data is longer than its declared size');
          this.state = State.ChunkSize;
          break;
        case State.Trailers:
          // Trailers are read and dropped: nothing the gateway relays depends on them.
          offset = this.readLine(chunk, offset);
          if (this.completeLine !== null && this.completeLine.length === 0) this.finish();
          break;
        case State.UntilClose:
          this.sink.onBody(offset === 0 ? chunk : chunk.subarray(offset));
          offset = chunk.length;
          break;
        case State.Done:
          // A response never sent for: the upstream is out of step with us, so the connection is unusable.
          throw new Http1ProtocolError('the upstream sent bytes after the end of its response');
      }
    }
  }

  /** The connection closed: the end of a read-until-close body, or of a response cut short. */
  end(): void {
    if (this.state === State.UntilClose) return this.finish();
    if (this.state !== State.Done) throw new Http1ProtocolError('the upstream closed the connection before the response was complete');
  }

  private finish(): void {
    this.state = State.Done;
    this.sink.onEnd();
  }

  private readHead(chunk: Buffer, offset: number): number {
    const part = offset === 0 ? chunk : chunk.subarray(offset);
    const head = this.head === null ? part : Buffer.concat([this.head, part]);
    const end = findHeadEnd(head, this.headSearchFrom);
    if (end === -1) {
      if (head.length > MAX_HEAD_BYTES) throw new Http1ProtocolError(`the response head is larger than ${MAX_HEAD_BYTES} bytes`);
      this.head = head;
      this.headSearchFrom = Math.max(0, head.length - 3);
      return chunk.length;
    }
    if (end > MAX_HEAD_BYTES) throw new Http1ProtocolError(`the response head is larger than ${MAX_HEAD_BYTES} bytes`);
    const headLength = this.head === null ? 0 : this.head.length;
    this.head = null;
    this.headSearchFrom = 0;
    // Without the CR of the last header line, if it has one.
    this.onHeadText(head.toString('latin1', 0, end > 0 && head[end - 1] === CR ? end - 1 : end));
    // `end` is the line feed of the last header line; the blank line (CR LF, or a bare LF) follows it.
    const bodyStart = end + (head[end + 1] === CR ? 3 : 2);
    return offset + bodyStart - headLength;
  }

  private onHeadText(text: string): void {
    const lineEnd = text.indexOf('\n');
    let statusLine = lineEnd === -1 ? text : text.slice(0, lineEnd);
    if (statusLine.charCodeAt(statusLine.length - 1) === CR) statusLine = statusLine.slice(0, -1);
    const statusCode = statusCodeOf(statusLine);
    if (statusCode === -1) throw new Http1ProtocolError(`malformed status line "${statusLine.slice(0, 64)}"`);
    const headerText = lineEnd === -1 ? '' : text.slice(lineEnd + 1);
    if (statusCode < 200) {
      // 100 Continue, 103 Early Hints…: interim, the real response follows on the same connection.
      if (statusCode === 101) throw new Http1ProtocolError('the upstream switched protocols');
      return;
    }
    const framing = readFraming(headerText);
    // HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 closes unless told to keep it.
    this.keepAlive = statusLine.charCodeAt(7) === 0x31 ? !framing.close : framing.keepAlive;
    this.keepAliveHintMs = framing.keepAliveHintMs;
    const head = new ResponseHead(headerText);
    if (statusCode === 204 || statusCode === 304) {
      this.sink.onHead(statusCode, head);
      return this.finish();
    }
    if (framing.chunked) {
      this.state = State.ChunkSize;
      // A sender that declares both is either broken or smuggling: read it, but never reuse the connection.
      if (framing.contentLength !== -1) this.keepAlive = false;
    } else if (framing.transferEncoding) {
      this.state = State.UntilClose;
      this.keepAlive = false;
    } else if (framing.contentLength !== -1) {
      this.state = State.LengthBody;
      this.remaining = framing.contentLength;
    } else {
      this.state = State.UntilClose;
      this.keepAlive = false;
    }
    this.sink.onHead(statusCode, head);
    if (this.state === State.LengthBody && this.remaining === 0) this.finish();
  }

  /**
   * Reads up to the end of a line: `completeLine` is then the line without its CR LF, or null when
   * the chunk ended first (the part is kept for the next chunk).
   */
  private readLine(chunk: Buffer, offset: number): number {
    const newline = chunk.indexOf(LF, offset);
    if (newline === -1) {
      this.completeLine = null;
      this.line = this.line === null ? chunk.subarray(offset) : Buffer.concat([this.line, chunk.subarray(offset)]);
      if (this.line.length > MAX_CHUNK_LINE_BYTES) throw new Http1ProtocolError('a chunk-size or trailer line is too long');
      return chunk.length;
    }
    let line = this.line === null ? chunk.subarray(offset, newline) : Buffer.concat([this.line, chunk.subarray(offset, newline)]);
    this.line = null;
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    this.completeLine = line;
    return newline + 1;
  }

  private chunkSize(line: Buffer): void {
    let size = 0;
    let digits = 0;
    for (; digits < line.length; digits++) {
      const value = hexValue(line[digits] as number);
      if (value === -1) break;
      size = size * 16 + value;
    }
    const next = line[digits];
    // A chunk extension (`;name=value`) may follow the size, after optional white space; anything else is malformed.
    if (digits === 0 || digits > MAX_CHUNK_SIZE_DIGITS || (next !== undefined && next !== SEMICOLON && next !== 0x20 && next !== 0x09)) {
      throw new Http1ProtocolError(`malformed chunk size "${line.toString('latin1', 0, Math.min(line.length, 32))}"`);
    }
    if (size === 0) {
      this.state = State.Trailers;
      return;
    }
    this.remaining = size;
    this.state = State.ChunkData;
  }
}

/**
 * `HTTP/1.x NNN[ reason]` → NNN, or -1. By hand: a regular expression here cost as much as the
 * rest of the head's parsing.
 */
function statusCodeOf(line: string): number {
  if (!line.startsWith('HTTP/1.') || (line.length > 12 && line.charCodeAt(12) !== 0x20)) return -1;
  const minor = line.charCodeAt(7);
  if ((minor !== 0x30 && minor !== 0x31) || line.charCodeAt(8) !== 0x20) return -1;
  const first = line.charCodeAt(9) - 0x30;
  const second = line.charCodeAt(10) - 0x30;
  const third = line.charCodeAt(11) - 0x30;
  if (!(first >= 1 && first <= 9 && second >= 0 && second <= 9 && third >= 0 && third <= 9)) return -1;
  // The reason phrase may hold any visible text, but no control characters.
  for (let index = 13; index < line.length; index++) {
    const code = line.charCodeAt(index);
    if (code < 0x20 && code !== 0x09) return -1;
  }
  return first * 100 + second * 10 + third;
}

/** Where the blank line that ends the head starts (`\r\n\r\n`, or a bare `\n\n`), or -1. */
function findHeadEnd(buffer: Buffer, from: number): number {
  let index = buffer.indexOf(LF, from);
  while (index !== -1) {
    if (buffer[index + 1] === LF) return index;
    if (buffer[index + 1] === CR && buffer[index + 2] === LF) return index;
    index = buffer.indexOf(LF, index + 1);
  }
  return -1;
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  return -1;
}

interface Framing {
  contentLength: number;
  chunked: boolean;
  /** A transfer coding is present (chunked or not). */
  transferEncoding: boolean;
  close: boolean;
  keepAlive: boolean;
  keepAliveHintMs: number | null;
}

/** Only the headers that decide where the body ends and whether the connection stays open. */
function readFraming(text: string): Framing {
  const framing: Framing = { contentLength: -1, chunked: false, transferEncoding: false, close: false, keepAlive: false, keepAliveHintMs: null };
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const first = text.charCodeAt(start);
    if (first === 0x20 || first === 0x09) throw new Http1ProtocolError('obsolete header line folding');
    const colon = text.indexOf(':', start);
    if (colon !== -1 && colon < end) {
      const beforeColon = text.charCodeAt(colon - 1);
      // RFC 9112 §5.1: no white space between a field name and its colon (a classic smuggling vector).
      if (beforeColon === 0x20 || beforeColon === 0x09) throw new Http1ProtocolError('white space before a header colon');
      const nameLength = colon - start;
      // Cheap first test on the length: most headers are none of these three.
      if (nameLength === 14 || nameLength === 17 || nameLength === 10) {
        const name = text.slice(start, colon).toLowerCase();
        const value = text.slice(colon + 1, text.charCodeAt(end - 1) === CR ? end - 1 : end).trim();
        if (name === 'content-length') {
          if (!/^\d{1,15}$/.test(value)) throw new Http1ProtocolError(`invalid Content-Length "${value.slice(0, 32)}"`);
          const length = Number(value);
          if (framing.contentLength !== -1 && framing.contentLength !== length) throw new Http1ProtocolError('conflicting Content-Length headers');
          framing.contentLength = length;
        } else if (name === 'transfer-encoding') {
          framing.transferEncoding = true;
          // Only a final `chunked` frames the body; any other last coding runs until the connection closes.
          framing.chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
        } else if (name === 'keep-alive') {
          const timeout = /(?:^|[,;\s])timeout\s*=\s*(\d{1,9})/i.exec(value);
          if (timeout !== null) framing.keepAliveHintMs = Number(timeout[1]) * 1000;
        } else if (name === 'connection') {
          const options = value.toLowerCase();
          // One option is the common case; a list (`keep-alive, Upgrade`) is split.
          if (options === 'keep-alive') framing.keepAlive = true;
          else if (options === 'close') framing.close = true;
          else {
            for (const option of options.split(',')) {
              const trimmed = option.trim();
              if (trimmed === 'close') framing.close = true;
              else if (trimmed === 'keep-alive') framing.keepAlive = true;
            }
          }
        }
      }
    } else if (end > start && !(end === start + 1 && first === CR)) {
      throw new Http1ProtocolError(`malformed header line "${text.slice(start, Math.min(end, start + 64))}"`);
    }
    start = end + 1;
  }
  return framing;
}

function parseHeaderLines(text: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const rawLine of text.split('\n')) {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const existing = headers[name];
    if (existing === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
    else if (Array.isArray(existing)) existing.push(value);
    else headers[name] = `${existing}, ${value}`;
  }
  return headers;
}

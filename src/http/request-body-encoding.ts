import zlib from 'node:zlib';
import { GatewayError } from '../errors/index.js';
import { bodyErrors } from './body-errors.js';

type Decompress = (buffer: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions, callback: (error: Error | null, result: Buffer) => void) => void;

/**
 * zstd is in Node's zlib from 22.15 and 23.8 on; on an older Node the gateway does not offer it
 * (its 415 and `Accept-Encoding` list what it can decode).
 */
const zstdDecompress = (zlib as unknown as { zstdDecompress?: Decompress }).zstdDecompress;

/** The request content codings the gateway decodes (RFC 9110 §8.4), by their lower-case name. */
const DECODERS: ReadonlyMap<string, Decompress> = new Map<string, Decompress>([
  ['gzip', zlib.gunzip],
  ['x-gzip', zlib.gunzip],
  ['deflate', zlib.inflate],
  ['br', zlib.brotliDecompress],
  ...(zstdDecompress === undefined ? [] : ([['zstd', zstdDecompress]] as const)),
]);

/** For the 415's `Accept-Encoding` header, as RFC 9110 §15.5.16 asks. */
export const ACCEPTED_REQUEST_ENCODINGS = ['gzip', 'deflate', 'br', ...(zstdDecompress === undefined ? [] : ['zstd']), 'identity'].join(', ');

/**
 * Whether a request's `Content-Encoding` can be decoded: null when it can (or there is none),
 * else the 415 to answer before reading the body.
 */
export function contentEncodingError(header: string | undefined): GatewayError | null {
  if (header === undefined) return null;
  const coding = header.trim().toLowerCase();
  if (coding === '' || coding === 'identity' || DECODERS.has(coding)) return null;
  return new GatewayError(
    'unsupported_content_encoding',
    `Content-Encoding ${JSON.stringify(header.slice(0, 40))} is not supported; send the body uncompressed or as one of: ${ACCEPTED_REQUEST_ENCODINGS}.`,
  );
}

/**
 * The body as sent, decoded on libuv's thread pool (never on the event loop) and cut off at
 * `limitBytes` of output: a few kilobytes of gzip can inflate to gigabytes, so the limit applies to
 * what the body becomes, not only to what arrived.
 */
export function decodeRequestBody(
  body: Buffer,
  header: string | undefined,
  limitBytes: number,
  done: (error: GatewayError | null, decoded: Buffer) => void,
): void {
  const decoder = header === undefined ? undefined : DECODERS.get(header.trim().toLowerCase());
  if (decoder === undefined) return done(null, body);
  decoder(body, { maxOutputLength: limitBytes }, (error, decoded) => {
    if (error === null) return done(null, decoded);
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return done(bodyErrors.tooLarge(), body);
    done(new GatewayError('invalid_body', `The request body is not valid ${header?.trim().toLowerCase()} data.`), body);
  });
}

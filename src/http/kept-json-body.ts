import type { FastifyInstance } from 'fastify';
import { parseJsonBody } from './json-body.js';
import { contentEncodingError, decodeRequestBody } from './request-body-encoding.js';
import { noteRequestedModel } from './requested-model.js';

/** A JSON body twice: its bytes, to pass on as they are, and what they say. */
export interface KeptJsonBody {
  readonly raw: Buffer;
  readonly parsed: unknown;
}

/**
 * Replaces a route scope's JSON parser with one that keeps the body's bytes beside the parsed
 * JSON, with the same rules as every other JSON body (encodings, size, nesting, prototype keys):
 * for routes that pass the caller's bytes on to an upstream. `keep` says which bytes: as received
 * (still compressed, when the upstream takes the caller's `content-encoding` too) or decoded.
 */
export function keepJsonBodies(scope: FastifyInstance, bodyLimitBytes: number, keep: 'received' | 'decoded'): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const contentEncoding = request.headers['content-encoding'];
    const encodingError = contentEncodingError(contentEncoding);
    if (encodingError !== null) return done(encodingError, undefined);
    decodeRequestBody(body as Buffer, contentEncoding, bodyLimitBytes, (error, decoded) => {
      if (error !== null) return done(error, undefined);
      try {
        const parsed = parseJsonBody(decoded);
        noteRequestedModel(request.record, parsed);
        done(null, { raw: keep === 'received' ? (body as Buffer) : decoded, parsed } satisfies KeptJsonBody);
      } catch (parseError) {
        done(parseError as Error, undefined);
      }
    });
  });
}

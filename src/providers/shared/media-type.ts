import type { IncomingHttpHeaders } from 'node:http';

/** Whether a `content-type` is `text/event-stream` (with any parameters). */
export function isEventStream(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.trimStart().toLowerCase().startsWith('text/event-stream');
}

/** A `content-type`'s media type, short enough to quote in an error. */
export function describeMediaType(contentType: string | undefined): string {
  if (contentType === undefined) return 'no content type';
  const mediaType = contentType.split(';', 1)[0]?.trim().slice(0, 64) ?? '';
  return mediaType === '' ? 'no content type' : mediaType;
}

/** A header's value; the first of a repeated one. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

import { Type, type TSchema } from '@sinclair/typebox';

/** `?limit=&cursor=` of every admin list: at most 1,000 a page (more is refused, not cut). */
export const PageQueryProperties = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000, default: 100, description: 'records per page, 1 to 1,000 (default 100)' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 800, description: 'the `next_cursor` of the previous page' })),
};

export const PageQuerySchema = Type.Object(PageQueryProperties, { additionalProperties: false });

/** The list envelope of every admin list: `{ object: 'list', data, next_cursor }`. */
export function ListSchema<T extends TSchema>(item: T) {
  return Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item),
      next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as `cursor` for the next page; null on the last one' }),
    },
    { additionalProperties: false },
  );
}

export interface ListBody<T> {
  object: 'list';
  data: T[];
  next_cursor: string | null;
}

export function listBody<R, T>(page: { data: readonly R[]; nextCursor: string | null }, toWire: (record: R) => T): ListBody<T> {
  return { object: 'list', data: page.data.map(toWire), next_cursor: page.nextCursor };
}

/** Times on the wire: ISO 8601 in UTC. */
export const IsoTime = (description: string) => Type.String({ description: `${description} (ISO 8601)` });

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** An id in the path: anything the store may hold (older records predate the id rules), so not the create pattern. */
export const PathId = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

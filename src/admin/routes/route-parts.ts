import { Type } from '@sinclair/typebox';
import type { PageRequest } from '../../access/index.js';
import type { AdminInput } from '../admin-route.js';

/** The answer to a DELETE. */
export const DeletedSchema = Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { additionalProperties: false });

/** `?limit=&cursor=` as the services take them (the query has been checked against PageQuerySchema). */
export function pageRequest(input: AdminInput): PageRequest {
  const { limit, cursor } = input.query as { limit?: number; cursor?: string };
  return { ...(limit === undefined ? {} : { limit }), ...(cursor === undefined ? {} : { cursor }) };
}

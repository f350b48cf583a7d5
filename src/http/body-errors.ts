import { GatewayError } from '../errors/index.js';

/**
 * Refusals of a request body, in the same words whichever layer read it: Fastify's JSON parser
 * (its errors translated in error-response.ts) or the JSON parser (app.ts).
 */
export const bodyErrors = {
  unsupportedMediaType: () => new GatewayError('unsupported_media_type', 'Unsupported Content-Type: send the body as application/json.'),
  tooLarge: () => new GatewayError('payload_too_large', 'The request body is larger than the server accepts.'),
  empty: () => new GatewayError('invalid_json', 'The request body is empty; send a JSON object.'),
  notJson: (reason: string) => new GatewayError('invalid_json', `The request body is not valid JSON: ${reason}`),
  tooDeep: (limit: number) => new GatewayError('invalid_body', `The request body nests objects and arrays more than ${limit} levels deep.`),
};

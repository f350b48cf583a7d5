export { ERROR_CODES, type ErrorCode } from './error-codes.js';
export { GatewayError, isGatewayError, type GatewayErrorOptions, type ValidationIssue } from './gateway-error.js';

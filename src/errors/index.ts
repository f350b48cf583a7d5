export { echo, MAX_ECHO_LENGTH } from './echo.js';
export { ERROR_CODES, type ErrorCode } from './error-codes.js';
export { GatewayError, isGatewayError, type GatewayErrorOptions, type ValidationIssue } from './gateway-error.js';
export type { FailureClass, UpstreamFailure } from './upstream-failure.js';
export { isDatabaseOutage } from './outage.js';

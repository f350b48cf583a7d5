import { GatewayError } from '../errors/index.js';
import type { Scope } from './scopes.js';
import type { Principal } from './token-authenticator.js';

export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.has(scope)) {
    throw new GatewayError('insufficient_scope', `This API key lacks the "${scope}" scope required for this endpoint.`);
  }
}

export function canUseModel(principal: Principal, modelId: string): boolean {
  return principal.models === null || principal.models.has(modelId);
}

export function requireModelAccess(principal: Principal, modelId: string): void {
  if (!canUseModel(principal, modelId)) {
    throw new GatewayError('model_not_allowed', `This API key may not use the model "${modelId}".`, { param: 'model' });
  }
}

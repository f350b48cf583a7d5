import type { CredentialHealth } from './credential-health.js';
import type { Route } from './model-catalog.js';
import type { ModelType } from '../config/index.js';

/**
 * The share of a pool's credentials that cooldowns for failures of the server (5xx, timeouts,
 * broken answers, connections) may keep out of use at once, as Envoy's outlier detection caps
 * ejections (`max_ejection_percent`). Rounded down, and never the last credential in use.
 */
export const MAX_EJECTED_SHARE = 0.5;

/**
 * The pool's credentials this attempt may use: not tried yet for this request, and usable now;
 * plus, when cooldowns for failures of the server hold more of the pool than the cap allows, those
 * of them whose cooldowns end first, used anyway. A caller who makes a server fail cannot empty a
 * pool that way, and a pool of one is never emptied by them. Cooldowns for the credential's own
 * failures (429, a spent quota, a refused key) and an operator's disable are not capped: using
 * such a credential could not succeed.
 */
export function availableRoutes<Type extends ModelType>(routes: readonly Route<Type>[], tried: ReadonlySet<string>, health: CredentialHealth): Route<Type>[] {
  const available: Route<Type>[] = [];
  let usable = 0;
  let held: Array<{ route: Route<Type>; until: number }> | null = null;
  for (const route of routes) {
    const id = route.credential.id;
    if (health.usable(id)) {
      usable++;
      if (!tried.has(id)) available.push(route);
      continue;
    }
    const until = health.heldForServerFailure(id);
    if (until !== null) (held ??= []).push({ route, until });
  }
  if (held === null) return available;
  const keptOut = Math.min(held.length, Math.floor(routes.length * MAX_EJECTED_SHARE), usable + held.length - 1);
  if (keptOut === held.length) return available;
  held.sort((left, right) => left.until - right.until);
  for (const { route } of held.slice(0, held.length - keptOut)) if (!tried.has(route.credential.id)) available.push(route);
  return available;
}

import type { CatalogModel, Route } from '../../routing/index.js';

/**
 * Whether `/v1/responses` is passed through on the route: its upstream speaks the Responses API,
 * and has not shown otherwise (`responses: auto` learns it from a 404 or 405).
 */
export function passesThrough(route: Route<'chat'>): boolean {
  return route.responses !== null && route.responses.servesResponses?.() !== false;
}

/**
 * The model limited to its routes whose upstream speaks the Responses API itself, or null when
 * none does: where a request goes that only such an upstream can serve (a built-in tool, a
 * conversation the upstream keeps). Made for each such request, since a server found to lack the
 * Responses API leaves it; requests that conversion can serve never come here.
 */
export function passthroughModelOf(model: CatalogModel<'chat'>): CatalogModel<'chat'> | null {
  const routes = model.routes.filter(passesThrough);
  return routes.length === 0 ? null : { ...model, routes, totalWeight: routes.reduce((sum, route) => sum + route.weight, 0) };
}

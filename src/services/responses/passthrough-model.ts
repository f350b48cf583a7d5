import type { CatalogModel } from '../../routing/index.js';

const passthroughModels = new WeakMap<CatalogModel<'chat'>, CatalogModel<'chat'> | null>();

/**
 * The model limited to its routes whose upstream speaks the Responses API itself, or null when
 * none does: where a request goes that only such an upstream can serve (a built-in tool, a
 * conversation the upstream keeps). Made once per model (a rebuilt catalog makes new models).
 */
export function passthroughModelOf(model: CatalogModel<'chat'>): CatalogModel<'chat'> | null {
  let passthrough = passthroughModels.get(model);
  if (passthrough === undefined) {
    const routes = model.routes.filter((route) => route.responses !== null);
    passthrough = routes.length === 0 ? null : { ...model, routes, totalWeight: routes.reduce((sum, route) => sum + route.weight, 0) };
    passthroughModels.set(model, passthrough);
  }
  return passthrough;
}

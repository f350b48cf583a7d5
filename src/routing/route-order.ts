import type { ModelType } from '../config/index.js';
import type { CatalogModel, Route } from './model-catalog.js';

/**
 * The order in which to try a model's routes: a weighted random draw without replacement, so
 * traffic splits by weight and a failed route is never tried twice for one request.
 */
export function routeOrder<Type extends ModelType>(model: CatalogModel<Type>, random: () => number = Math.random): readonly Route<Type>[] {
  const { routes } = model;
  if (routes.length === 1) return routes;
  const remaining = [...routes];
  const ordered: Route<Type>[] = [];
  let remainingWeight = model.totalWeight;
  while (remaining.length > 0) {
    let pick = random() * remainingWeight;
    let index = 0;
    while (index < remaining.length - 1 && pick >= (remaining[index] as Route<Type>).weight) {
      pick -= (remaining[index] as Route<Type>).weight;
      index++;
    }
    const [route] = remaining.splice(index, 1) as [Route<Type>];
    ordered.push(route);
    remainingWeight -= route.weight;
  }
  return ordered;
}

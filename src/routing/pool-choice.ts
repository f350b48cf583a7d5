import type { RoutingStrategy } from '../config/index.js';
import type { InFlight } from './in-flight.js';
import type { Route } from './model-catalog.js';
import { rendezvousScore } from './rendezvous.js';

/**
 * The credential a request without a session goes to, among `routes` (available, with room; at
 * least one):
 * - `weighted`: a weighted random draw, so traffic splits by weight;
 * - `least-busy`: the fewest requests in flight, ties to the higher weight, then a random draw;
 * - `ordered`: the lowest `priority`, a weighted draw among equals.
 */
export function chooseUnbound<Route_ extends Route>(strategy: RoutingStrategy, routes: readonly Route_[], inFlight: InFlight, random: () => number): Route_ {
  if (routes.length === 1) return routes[0] as Route_;
  return weightedDraw(strategy === 'weighted' ? routes : leaders(strategy, routes, inFlight), random);
}

/**
 * The credential a session goes to when it has none, or must leave its own: the same rule, with
 * the session's rendezvous ranking in place of the random draw. Every gateway process ranks a
 * session's credentials alike, so they bind it alike without talking, and a session that must
 * move goes to the next credential of that same order.
 */
export function chooseForSession<Route_ extends Route>(strategy: RoutingStrategy, routes: readonly Route_[], inFlight: InFlight, sessionHash: number): Route_ {
  const candidates = strategy === 'weighted' || routes.length === 1 ? routes : leaders(strategy, routes, inFlight);
  let best = candidates[0] as Route_;
  let bestScore = -Infinity;
  for (const route of candidates) {
    const score = rendezvousScore(sessionHash, route.credentialHash, route.weight);
    if (score > bestScore) {
      best = route;
      bestScore = score;
    }
  }
  return best;
}

/** The routes the strategy ranks first: the least busy (then the heaviest), or the lowest priority. */
function leaders<Route_ extends Route>(strategy: RoutingStrategy, routes: readonly Route_[], inFlight: InFlight): Route_[] {
  let best: Route_[] = [];
  let bestRank: [number, number] = [Infinity, Infinity];
  for (const route of routes) {
    const rank: [number, number] = strategy === 'least-busy' ? [inFlight.count(route.credential.id), -route.weight] : [route.priority, 0];
    const order = rank[0] - bestRank[0] || rank[1] - bestRank[1];
    if (order < 0) {
      best = [route];
      bestRank = rank;
    } else if (order === 0) best.push(route);
  }
  return best;
}

function weightedDraw<Route_ extends Route>(routes: readonly Route_[], random: () => number): Route_ {
  if (routes.length === 1) return routes[0] as Route_;
  let total = 0;
  for (const route of routes) total += route.weight;
  let pick = random() * total;
  for (const route of routes) {
    if (pick < route.weight) return route;
    pick -= route.weight;
  }
  return routes[routes.length - 1] as Route_;
}

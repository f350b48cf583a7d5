import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { echo, GatewayError } from '../../errors/index.js';

/**
 * What every console response carries. The CSP allows no inline script or style and no other
 * origin: the built app is files under /console/assets, and it talks to the admin API only.
 */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

/** Hashed file names never change content: cached for a year. The page itself is checked each time, so a new build is seen at once. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';
const PAGE_CACHE = 'no-cache';

/**
 * Serves the built console (`dist/web`, made by `npm run build`) at `/console`: its files, and its
 * page for every other path under `/console/` (the app routes in the browser, so a reload or a
 * shared link of `/console/requests?session_id=…` works). Files are sent pre-compressed (`.br`,
 * `.gz` from the build) when the browser takes them. A missing asset is a 404, not the page.
 */
export function registerConsoleRoute(app: FastifyInstance, root: string | null): void {
  void app.register(async (scope) => {
    scope.addHook('onSend', (_request, reply, payload, done) => {
      reply.headers(CONSOLE_SECURITY_HEADERS);
      done(null, payload);
    });
    if (root === null) {
      const notBuilt = (): never => {
        throw new GatewayError('route_not_found', 'The console is not built: run `npm run build` (npm install does it), then restart the gateway.');
      };
      scope.get('/console', notBuilt);
      scope.get('/console/*', notBuilt);
      return;
    }
    await scope.register(fastifyStatic, {
      root,
      prefix: '/console/',
      wildcard: false,
      index: false,
      preCompressed: true,
      dotfiles: 'ignore',
      cacheControl: false,
      setHeaders: (reply, path) => {
        reply.header('cache-control', path.includes('/assets/') ? ASSET_CACHE : PAGE_CACHE);
      },
    });
    const page = (_request: unknown, reply: FastifyReply) => reply.header('cache-control', PAGE_CACHE).sendFile('index.html');
    scope.get('/console', page);
    scope.get('/console/*', page);
    scope.get('/console/assets/*', (request) => {
      throw new GatewayError('route_not_found', `No console file ${echo(request.url.split('?')[0] ?? '')}.`);
    });
  });
}

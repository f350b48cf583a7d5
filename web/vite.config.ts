import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Paths come from this file's location, not the cwd: `npm run build` runs it from the repo root.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // Vite's own oxc transformer does the JSX; no React plugin (no fast refresh needed for a build).
  oxc: { jsx: { runtime: 'automatic', importSource: 'react' } },
  // `vite --config web/vite.config.ts` for development: the admin API of a running gateway behind
  // the dev server. Host is kept (no changeOrigin) so the gateway's CSRF Origin check sees its own.
  server: { proxy: { '/admin': process.env['SWITCHYARD_URL'] ?? 'http://127.0.0.1:8080' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // The server's CSP has no 'unsafe-inline': never inline assets as data: scripts or styles.
    assetsInlineLimit: 0,
  },
});

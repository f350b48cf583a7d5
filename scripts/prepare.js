// `npm install` and `npm ci` here build dist/ (the server and the console) through this script.
// A production install (`--omit=dev`) has no TypeScript or Vite to build with: it uses a dist/ built
// already, as the release package of `npm run release` carries it (docs/operations.md, "Install for
// production"), or one built before the dev dependencies were pruned.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const at = (path) => new URL(`../${path}`, import.meta.url);
const toolchain = ['typescript', 'vite'].filter((name) => existsSync(at(`node_modules/${name}/package.json`)));
const built = existsSync(at('dist/cli/main.js')) && existsSync(at('dist/web/index.html'));

if (toolchain.length === 2) {
  // npm names itself in npm_execpath when it runs a script; `npm` from PATH when run by hand.
  const npm = process.env.npm_execpath;
  const build = npm ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' }) : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
  process.exit(build.status ?? 1);
}
if (built) {
  console.error('prepare: TypeScript and Vite are not installed (a production install): dist/ is used as it was built.');
  process.exit(0);
}
console.error(
  [
    'prepare: cannot build dist/: its tools (TypeScript and Vite) are dev dependencies, not installed here',
    '(was it `npm ci --omit=dev` in a clone?), and there is no built dist/ to use instead.',
    'Either install with the dev dependencies (`npm ci`), or build the release package where they are',
    '(`npm run release`) and run `npm ci --omit=dev` in it, unpacked: docs/operations.md, "Install for production".',
  ].join('\n'),
);
process.exit(1);

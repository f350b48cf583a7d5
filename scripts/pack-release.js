// `npm run release [-- DIRECTORY]`: the release package, switchyard-<version>.tgz, which a server
// installs without the development tools (docs/operations.md, "Install for production").
// It holds the built dist/ (server and console), a package.json without devDependencies and an
// npm-shrinkwrap.json cut from package-lock.json, so that `npm ci` in the unpacked package installs
// the versions CI tested and nothing else. The package is then the root project, which is what
// keeps package.json's `overrides` (npm applies them to the root only): the empty stand-ins for
// node-llama-cpp's GPU and foreign-platform binaries, 650 MB otherwise.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { productionLock } from './production-lock.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const destination = resolve(process.argv[2] ?? '.');
const readJson = (name) => JSON.parse(readFileSync(join(root, name), 'utf8'));

if (!existsSync(join(root, 'dist/cli/main.js')) || !existsSync(join(root, 'dist/web/index.html'))) {
  console.error('pack-release: dist/ is not built: run `npm run release`, which builds it first.');
  process.exit(1);
}
const manifest = readJson('package.json');
const { devDependencies: _development, scripts, files, ...kept } = manifest;
const release = { ...kept, files: [...files, 'npm-shrinkwrap.json'], scripts: { start: scripts.start } };

const staging = mkdtempSync(join(tmpdir(), 'switchyard-release-'));
try {
  for (const name of [...files, 'README.md']) cpSync(join(root, name), join(staging, name), { recursive: true });
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify(release, null, 2)}\n`);
  writeFileSync(join(staging, 'npm-shrinkwrap.json'), `${JSON.stringify(productionLock(readJson('package-lock.json')), null, 2)}\n`);
  // npm names itself in npm_execpath when it runs a script; `npm` from PATH when run by hand.
  const npm = process.env.npm_execpath;
  const args = ['pack', staging, '--pack-destination', destination, '--loglevel=warn'];
  const pack = npm
    ? spawnSync(process.execPath, [npm, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawnSync('npm', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  if (pack.status !== 0) process.exit(pack.status ?? 1);
  console.log(join(destination, pack.stdout.toString().trim().split('\n').at(-1)));
} finally {
  rmSync(staging, { recursive: true, force: true });
}

import { readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The files tsconfig.build.json compiles into dist/: src without tests and contract checks. */
function shippedSources(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return shippedSources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('-contract.ts') ? [path] : [];
  });
}

/** The packages a module loads when it runs: `import type` is erased, every other import and export-from stays. */
function loadedPackages(source: string): string[] {
  const specifiers = [
    ...source.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?\bfrom\s+'([^']+)'/gm),
    ...source.matchAll(/^\s*import\s+'([^']+)'/gm),
    ...source.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
    ...source.matchAll(/\.resolve\(\s*'([^'.][^']*)'\s*\)/g),
  ].map((match) => match[1] ?? '');
  return specifiers
    .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:') && !builtinModules.includes(specifier.split('/')[0] ?? ''))
    .map((specifier) =>
      specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/'),
    );
}

describe('a production install (--omit=dev) has every package the server loads', () => {
  it('takes each package src/ loads at run time from dependencies, never from devDependencies', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const missing = shippedSources(join(root, 'src')).flatMap((file) =>
      loadedPackages(readFileSync(file, 'utf8'))
        .filter((name) => !(name in manifest.dependencies))
        .map((name) => `${relative(root, file)} loads ${name}`),
    );
    expect(missing).toEqual([]);
  });
});

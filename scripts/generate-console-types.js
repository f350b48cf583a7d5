// Writes web/src/api/types.ts from the admin API's OpenAPI document (scripts/console-types.ts).
// Vite's module runner loads the TypeScript sources as the tests do, so nothing needs building first.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runnerImport } from 'vite';

const root = fileURLToPath(new URL('../', import.meta.url));
const { module } = await runnerImport(`${root}scripts/console-types.ts`, { root, configFile: false, logLevel: 'error' });
writeFileSync(`${root}${module.CONSOLE_TYPES_PATH}`, module.consoleTypesSource());
console.log(`wrote ${module.CONSOLE_TYPES_PATH}`);

#!/usr/bin/env node
// The package's command. It runs the compiled CLI so start-up does not pay for a TypeScript loader.
// The Node check comes first, and the CLI is imported only after it (static imports would load the
// native modules before any line here ran, and an unsupported Node dies on them without a word).
import { existsSync } from 'node:fs';
import { isSupportedNode, unsupportedNodeMessage } from './supported-node.js';

/** EX_UNAVAILABLE (sysexits.h): what the command needs, a supported Node, is not there. */
const EXIT_UNSUPPORTED_NODE = 69;

if (!isSupportedNode(process.versions.node)) {
  process.stderr.write(unsupportedNodeMessage(process.versions.node));
  process.exit(EXIT_UNSUPPORTED_NODE);
}
const cli = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('switchyard: the command is not built (no dist/cli/main.js): run `npm run build`, which needs the dev dependencies (`npm install`).\n');
  process.exit(1);
}
const { runCli } = await import(cli.href);
process.exitCode = await runCli(process.argv.slice(2));

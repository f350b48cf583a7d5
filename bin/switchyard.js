#!/usr/bin/env node
// The package's command. It runs the compiled CLI so start-up does not pay for a TypeScript loader.
import { runCli } from '../dist/cli/main.js';

process.exitCode = await runCli(process.argv.slice(2));

import { runCli } from '../../src/cli/main.js';

export interface CliRun {
  code: number;
  stdout: string[];
  stderr: string[];
}

/** Runs the `switchyard` command line in this process, its output captured line by line. */
export async function cli(...argv: string[]): Promise<CliRun> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await runCli(argv, { stdout: (line) => stdout.push(line), stderr: (line) => stderr.push(line) });
  return { code, stdout, stderr };
}

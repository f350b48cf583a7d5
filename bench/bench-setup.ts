import { execFileSync, execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { portkeyEntry, type SwitchyardBuild } from './targets.js';

/** What the bench needs before it starts: its tools, Portkey, and the `--baseline` build. */

const PORTKEY_VERSION = '1.15.2';

export const say = (text: string) => process.stderr.write(`bench: ${text}\n`);

/**
 * `--baseline DIR`: another built checkout of Switchyard (e.g. the main an issue started from,
 * `git worktree add DIR COMMIT && (cd DIR && npm ci)`), measured as one more target taking turns
 * with the others, so a change's cost is read within the same rounds as the change itself.
 */
export function baselineBuild(argv: readonly string[]): SwitchyardBuild | null {
  const index = argv.indexOf('--baseline');
  if (index === -1) return null;
  const directory = argv[index + 1];
  if (directory === undefined) throw new Error('--baseline needs the directory of a built checkout');
  const buildRoot = resolve(directory);
  if (!existsSync(join(buildRoot, 'bin', 'switchyard.js')) || !existsSync(join(buildRoot, 'dist'))) {
    throw new Error(`--baseline ${buildRoot}: no built Switchyard there (bin/switchyard.js and dist/; run npm ci in it)`);
  }
  let commit = '';
  try {
    commit = ` ${execFileSync('git', ['-C', buildRoot, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()}`;
  } catch {
    // Not a git checkout: the directory names it.
  }
  return { root: buildRoot, name: 'baseline', label: `Switchyard baseline${commit}` };
}

function has(command: string): boolean {
  try {
    execFileSync('which', [command], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** nginx and wrk (or those of `commands` named) come from Debian; install them when missing, and say so. */
export function ensureTools(notes: string[], commands: ReadonlyArray<'nginx' | 'wrk' | 'valgrind'> = ['nginx', 'wrk']): void {
  const missing = commands.filter((command) => !has(command));
  if (missing.length === 0) return;
  say(`installing ${missing.join(' and ')} with apt-get (Debian packages ${missing.map((name) => (name === 'nginx' ? 'nginx-light' : name)).join(', ')})`);
  execSync(
    `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing.map((name) => (name === 'nginx' ? 'nginx-light' : name)).join(' ')}`,
    { stdio: 'inherit' },
  );
  notes.push(`installed ${missing.join(', ')} with apt-get for this run`);
}

/** Portkey's gateway from npm into bench/.vendor (not a dependency of ours); skipped if it cannot be had. */
export function ensurePortkey(root: string, wanted: boolean, notes: string[]): string | null {
  if (!wanted) return null;
  const existing = portkeyEntry(root);
  if (existing !== null) return existing;
  say(`installing @portkey-ai/gateway@${PORTKEY_VERSION} into bench/.vendor for comparison`);
  try {
    execSync(`npm install --prefix ${join(root, 'bench', '.vendor')} --no-save --no-audit --no-fund --loglevel=error @portkey-ai/gateway@${PORTKEY_VERSION}`, {
      stdio: 'inherit',
    });
  } catch {
    notes.push('Portkey could not be installed; its column is missing');
    return null;
  }
  return portkeyEntry(root);
}

/**
 * An error's most telling line, for a remark in the report: a failed command's message starts
 * with the command, its cause follows (for a refused config, the line naming the key).
 */
export function firstLine(error: unknown): string {
  const lines = (error instanceof Error ? error.message : String(error))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('Command failed'));
  return (lines.find((line) => /strategy|additional|unknown|invalid|must/i.test(line)) ?? lines[0] ?? 'no message').slice(0, 200);
}

import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The real Claude Code CLI (`@anthropic-ai/claude-code`, a devDependency; its native binary). */
export const CLAUDE = join(process.cwd(), 'node_modules', '.bin', 'claude');

export interface ClaudeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ClaudePlace {
  /** Its HOME (its settings and sessions go to `{home}/.claude`). */
  home: string;
  /** The directory it works in. */
  workdir: string;
  /** The gateway's URL, as `ANTHROPIC_BASE_URL`. */
  baseUrl: string;
  /** A `svc_` token, as `ANTHROPIC_AUTH_TOKEN`. */
  token: string;
}

/**
 * `claude -p` (one non-interactive turn) offline, with nothing of the caller's environment but
 * PATH: the gateway as its API by two variables, and its non-essential traffic (updates,
 * telemetry, error reports) turned off, as docs/claude-code.md tells users to do.
 */
export function runClaude(args: string[], place: ClaudePlace, timeoutMs = 60_000): Promise<ClaudeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE, args, {
      cwd: place.workdir,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: place.home,
        ANTHROPIC_BASE_URL: place.baseUrl,
        ANTHROPIC_AUTH_TOKEN: place.token,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The real Codex CLI (`@openai/codex`, a devDependency). */
export const CODEX = join(process.cwd(), 'node_modules', '.bin', 'codex');

export interface CodexRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CodexPlace {
  /** Its HOME; CODEX_HOME is `{home}/.codex`. */
  home: string;
  /** The directory it works in. */
  workdir: string;
  /** Given to Codex as SWITCHYARD_TOKEN, the provider's `env_key`. */
  token: string;
}

/**
 * `~/.codex/config.toml` for a custom provider, as the README shows, at `baseUrl` (which ends in
 * `/v1` or `/v1/native`); retries off so that failures are quick and visible.
 */
export function writeCodexConfig(home: string, model: string, baseUrl: string): void {
  mkdirSync(join(home, '.codex'), { recursive: true });
  writeFileSync(
    join(home, '.codex', 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "switchyard"',
      '',
      '[model_providers.switchyard]',
      'name = "Switchyard"',
      `base_url = "${baseUrl}"`,
      'wire_api = "responses"',
      'env_key = "SWITCHYARD_TOKEN"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
}

/** Runs Codex offline with nothing of the caller's environment but PATH. */
export function runCodex(args: string[], place: CodexPlace): Promise<CodexRun> {
  return new Promise((resolve, reject) => {
    // stdin closed: `codex exec` otherwise waits for more prompt on it.
    const child = spawn(CODEX, args, {
      cwd: place.workdir,
      env: { PATH: process.env['PATH'] ?? '', HOME: place.home, CODEX_HOME: join(place.home, '.codex'), SWITCHYARD_TOKEN: place.token, RUST_LOG: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

import { existsSync, readFileSync } from 'node:fs';
import { loadCommonConfig } from '../config/index.js';
import { CliFailure, EXIT_CONFIG, type CliIo } from './cli-io.js';

/**
 * `switchyard reload`: sends SIGHUP to the gateway whose pid `server.pid_file` holds, which then
 * reopens its log file and reloads its config. The outcome (what changed, or why the file was
 * refused) is in the gateway's log: this process only delivers the signal.
 */
export async function reloadCommand(options: { config?: string; pidFile?: string }, io: CliIo): Promise<number> {
  const pidFile = options.pidFile ?? loadCommonConfig({ configPath: options.config }).config.server.pid_file;
  if (pidFile === undefined) {
    throw new CliFailure(
      'server.pid_file is not set: set it in the config (the gateway writes its pid there), pass --pid-file, or send the gateway SIGHUP yourself (kill -HUP <pid>)',
      EXIT_CONFIG,
    );
  }
  if (!existsSync(pidFile)) throw new CliFailure(`${pidFile} does not exist: is the gateway running?`, 1);
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new CliFailure(`${pidFile} does not hold a process id`, 1);
  // A pid file left behind by a crash may name a process that is not ours by now.
  const commandLine = `/proc/${pid}/cmdline`;
  if (existsSync(commandLine) && !readFileSync(commandLine, 'utf8').includes('switchyard')) {
    throw new CliFailure(`process ${pid} (from ${pidFile}) is not a switchyard gateway; the pid file is stale`, 1);
  }
  try {
    process.kill(pid, 'SIGHUP');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ESRCH') throw new CliFailure(`no process ${pid} (from ${pidFile}): is the gateway running?`, 1);
    throw error;
  }
  io.stdout(`sent SIGHUP to switchyard (pid ${pid}): it reopens its log file and reloads its config; its log says what changed, or why the file was refused`);
  return 0;
}

import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/index.js';
import { releaseVersion } from '../core/index.js';
import { NewerSchemaError } from '../store/index.js';
import { CliFailure, EXIT_CONFIG, EXIT_NEWER_SCHEMA, EXIT_USAGE, processIo, type CliIo } from './cli-io.js';
import { reloadCommand } from './reload-command.js';
import { serveCommand, type ServeOptions } from './serve-command.js';
import { addCodexCommand, listAccountsCommand, removeCredentialCommand, type AddCodexOptions } from './credentials-command.js';
import { backupCommand, type BackupOptions } from './backup-command.js';
import { migrateCommand, migrationStatusCommand } from './migrate-command.js';
import { listRequestsCommand, tailRequestsCommand, type ListOptions, type TailOptions } from './requests-command.js';
import { pruneRequestsCommand, type PruneOptions } from './prune-command.js';
import { addLimitOptions } from './limit-options.js';
import { createProjectCommand, deleteProjectCommand, listProjectsCommand, updateProjectCommand, type ProjectOptions } from './projects-command.js';
import { createTeamCommand, deleteTeamCommand, listTeamsCommand, updateTeamCommand, type TeamOptions } from './teams-command.js';
import { createTokenCommand, listTokensCommand, revokeTokenCommand, updateTokenCommand, type CreateOptions, type UpdateOptions } from './tokens-command.js';

/** Runs the `switchyard` command line and resolves with the process exit code. */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    return report(error, io);
  }
}

function buildProgram(io: CliIo, setExitCode: (code: number) => void): Command {
  const program = new Command('switchyard')
    .description('Self-hosted inference gateway')
    .version(releaseVersion(), '-v, --version', 'print the version')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text.trimEnd()), writeErr: (text) => io.stderr(text.trimEnd()) });

  program
    .command('serve')
    .description('run the gateway until SIGTERM/SIGINT')
    .option('-c, --config <file>', 'configuration file (else $SWITCHYARD_CONFIG, else ./switchyard.yaml)')
    .option('--workers <n>', 'processes serving the port: a number, or auto for one per core (else server.workers); more than 1 needs state.url on Redis')
    .action(async (options: ServeOptions) => setExitCode(await serveCommand(options, io)));

  program
    .command('reload')
    .description("have the running gateway reload its config and reopen its log file (SIGHUP to server.pid_file's process)")
    .option('-c, --config <file>', 'configuration file, for server.pid_file (else $SWITCHYARD_CONFIG, else ./switchyard.yaml)')
    .option('--pid-file <file>', "the pid file to read instead of the config's server.pid_file")
    .action(async (options: { config?: string; pidFile?: string }) => setExitCode(await reloadCommand(options, io)));

  const tokens = program.command('tokens').description('manage API tokens');
  addLimitOptions(
    tokens
      .command('create')
      .description('create a token; prints it alone on the last line of stdout')
      .requiredOption('--team <team>', 'team the token belongs to (created when missing)')
      .option('--project <project>', 'a project of the team (it must exist: `switchyard projects create`)')
      .option('--scopes <scopes>', 'comma-separated scopes (default: all but admin)')
      .option('--models <models>', 'comma-separated model allow-list (default: all models)')
      .option('--expires-in <duration>', 'lifetime such as 30d, 12h, 2w (default: never expires)')
      .option('--name <name>', 'a label to recognise the token by'),
    false,
  )
    .option('-c, --config <file>', 'configuration file')
    .action(async (options: CreateOptions) => setExitCode(await createTokenCommand(options, io)));
  tokens
    .command('list')
    .description('list tokens with their limits (secrets are never shown)')
    .option('--team <team>', 'only tokens of this team')
    .option('--json', 'print JSON')
    .option('-c, --config <file>', 'configuration file')
    .action(async (options: { config?: string; json?: boolean; team?: string }) => setExitCode(await listTokensCommand(options, io)));
  addLimitOptions(
    tokens
      .command('update')
      .description("change a token's scopes, models, expiry or limits; what no flag names is kept")
      .argument('<id>', 'token id, e.g. tok_…')
      .option('--scopes <scopes>', 'comma-separated scopes')
      .option('--models <models>', 'comma-separated model allow-list; all lifts it')
      .option('--expires-in <duration>', 'a new lifetime from now, such as 30d; never removes the expiry')
      .option('--name <name>', 'a label to recognise the token by'),
    true,
  )
    .option('-c, --config <file>', 'configuration file')
    .action(async (id: string, options: UpdateOptions) => setExitCode(await updateTokenCommand(id, options, io)));
  tokens
    .command('revoke')
    .description('revoke a token by id; takes effect on the next request')
    .argument('<id>', 'token id, e.g. tok_…')
    .option('-c, --config <file>', 'configuration file')
    .action(async (id: string, options: { config?: string }) => setExitCode(await revokeTokenCommand(id, options, io)));

  addTeamCommands(program, io, setExitCode);
  addProjectCommands(program, io, setExitCode);

  const credentials = program.command('credentials').description('upstream accounts added at run time (stored encrypted under SWITCHYARD_SECRET_KEY)');
  credentials
    .command('add-codex')
    .description('add a ChatGPT account from a Codex auth.json; prints its id on stdout')
    .requiredOption('--id <id>', 'the credential id, as routes and logs name it')
    .requiredOption('--auth-file <file>', 'the auth.json `codex login` wrote (~/.codex/auth.json)')
    .option('--base-url <url>', 'the Codex backend (default https://chatgpt.com/backend-api/codex)')
    .option('--token-url <url>', 'where tokens are refreshed (default https://auth.openai.com/oauth/token)')
    .option('-c, --config <file>', 'configuration file')
    .action(async (options: AddCodexOptions) => setExitCode(await addCodexCommand(options, io)));
  credentials
    .command('list')
    .description('list the accounts added at run time (never their tokens)')
    .option('--json', 'print JSON')
    .option('-c, --config <file>', 'configuration file')
    .action(async (options: { config?: string; json?: boolean }) => setExitCode(await listAccountsCommand(options, io)));
  credentials
    .command('remove')
    .description('remove an account added at run time')
    .argument('<id>', 'its credential id')
    .option('-c, --config <file>', 'configuration file')
    .action(async (id: string, options: { config?: string }) => setExitCode(await removeCredentialCommand(id, options, io)));

  const requests = program.command('requests').description('read the request log from the database');
  const filterOptions = (command: Command) =>
    command
      .option('--session <id>', 'only requests of this session')
      .option('--status <status>', 'only this status (429) or class (5xx)')
      .option('--token <id>', 'only requests made with this token id (tok_…)')
      .option('--json', 'print JSON')
      .option('-c, --config <file>', 'configuration file');
  filterOptions(requests.command('list').description('list the newest requests first'))
    .option('--team <team>', 'only requests of this team')
    .option('--project <project>', 'only requests of this project (with --team)')
    .option('--model <model>', 'only requests for this model')
    .option('--from <time>', 'only requests started at or after this ISO 8601 time (2026-11-24, 2026-11-24T09:00:00Z)')
    .option('--to <time>', 'only requests started before this ISO 8601 time')
    .option('--limit <n>', 'how many (default 20)')
    .action(async (options: ListOptions) => setExitCode(await listRequestsCommand(options, io)));
  filterOptions(requests.command('tail').description('print the last requests, then each one as it is logged, until Ctrl-C'))
    .option('--lines <n>', 'how many to print first (default 10)')
    .option('--interval <ms>', 'how often to look for new rows (default 1000)')
    .action(async (options: TailOptions) => setExitCode(await tailRequestsCommand(options, io, untilStopped())));
  requests
    .command('prune')
    .description('remove the rows older than request_log.retention now, as the gateway does hourly; exit 75 when another process is running a pass')
    .option('--vacuum', 'SQLite: then turn on incremental vacuum and rebuild the file (VACUUM), once per database: it locks the database while it runs')
    .option('--json', 'print JSON')
    .option('-c, --config <file>', 'configuration file')
    .action(async (options: PruneOptions) => setExitCode(await pruneRequestsCommand(options, io)));

  program
    .command('backup')
    .description('copy the SQLite database to FILE, safe while gateways run (SQLite online backup); for PostgreSQL, print the pg_dump to run')
    .argument('<file>', 'where to write the backup (refused if it exists, unless --force)')
    .option('--force', 'replace FILE if it exists')
    .option('-c, --config <file>', 'configuration file')
    .action(async (file: string, options: BackupOptions) => setExitCode(await backupCommand(file, options, io)));

  program
    .command('migrate')
    .description('apply pending database migrations (serve applies them at start too); --status lists them and changes nothing')
    .option('--status', "list applied, pending and unknown (a newer release's) migrations; exit 65 when there are unknown ones")
    .option('--json', 'with --status: print JSON')
    .option('-c, --config <file>', 'configuration file')
    .action(async (options: { config?: string; json?: boolean; status?: boolean }) =>
      setExitCode(options.status === true ? await migrationStatusCommand(options, io) : await migrateCommand(options, io)),
    );

  return program;
}

/** `switchyard teams create|list|update|delete`: limit flags on create and update (`none` removes one on update). */
function addTeamCommands(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  const teams = program.command('teams').description('manage teams: what tokens belong to, with their limits and quotas');
  addLimitOptions(
    teams
      .command('create')
      .description('create a team; prints its id on stdout')
      .argument('<id>', 'the team id tokens carry (A-Z a-z 0-9 . _ -)')
      .option('--name <name>', 'a name shown to people (default: the id)'),
    false,
  )
    .option('-c, --config <file>', 'configuration file')
    .action(async (id: string, options: TeamOptions) => setExitCode(await createTeamCommand(id, options, io)));
  teams
    .command('list')
    .description('list teams with their limits')
    .option('--json', 'print JSON')
    .option('-c, --config <file>', 'configuration file')
    .action(async (options: { config?: string; json?: boolean }) => setExitCode(await listTeamsCommand(options, io)));
  addLimitOptions(
    teams
      .command('update')
      .description("change a team's name or limits; what no flag names is kept")
      .argument('<id>', 'the team id')
      .option('--name <name>', 'a name shown to people'),
    true,
  )
    .option('-c, --config <file>', 'configuration file')
    .action(async (id: string, options: TeamOptions) => setExitCode(await updateTeamCommand(id, options, io)));
  teams
    .command('delete')
    .description('delete a team and its projects; refused while it has live tokens (they are named)')
    .argument('<id>', 'the team id')
    .option('-c, --config <file>', 'configuration file')
    .action(async (id: string, options: { config?: string }) => setExitCode(await deleteTeamCommand(id, options, io)));
}

/** `switchyard projects create|list|update|delete --team T`: the team must exist (a project never creates it). */
function addProjectCommands(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  const projects = program.command('projects').description("manage a team's projects, with their limits and quotas");
  const team = '--team <team>';
  addLimitOptions(
    projects
      .command('create')
      .description('create a project in an existing team; prints its id on stdout')
      .argument('<id>', 'the project id (A-Z a-z 0-9 . _ -)')
      .requiredOption(team, 'the team it belongs to (must exist)')
      .option('--name <name>', 'a name shown to people (default: the id)'),
    false,
  )
    .option('-c, --config <file>', 'configuration file')
    .action(async (id: string, options: ProjectOptions) => setExitCode(await createProjectCommand(id, options, io)));
  projects
    .command('list')
    .description("list a team's projects with their limits")
    .requiredOption(team, 'the team')
    .option('--json', 'print JSON')
    .option('-c, --config <file>', 'configuration file')
    .action(async (options: { config?: string; json?: boolean; team: string }) => setExitCode(await listProjectsCommand(options, io)));
  addLimitOptions(
    projects
      .command('update')
      .description("change a project's name or limits; what no flag names is kept")
      .argument('<id>', 'the project id')
      .requiredOption(team, 'the team')
      .option('--name <name>', 'a name shown to people'),
    true,
  )
    .option('-c, --config <file>', 'configuration file')
    .action(async (id: string, options: ProjectOptions) => setExitCode(await updateProjectCommand(id, options, io)));
  projects
    .command('delete')
    .description('delete a project; refused while it has live tokens (they are named)')
    .argument('<id>', 'the project id')
    .requiredOption(team, 'the team')
    .option('-c, --config <file>', 'configuration file')
    .action(async (id: string, options: { config?: string; team: string }) => setExitCode(await deleteProjectCommand(id, options, io)));
}

/** Aborts on the first SIGINT or SIGTERM, so a follow loop ends and closes its database. */
function untilStopped(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  controller.signal.addEventListener('abort', () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  });
  return controller.signal;
}

function report(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (or the help text, which exits 0).
    return error.exitCode === 0 ? 0 : EXIT_USAGE;
  }
  if (error instanceof ConfigError) {
    io.stderr(`switchyard: config error: ${error.message}`);
    return EXIT_CONFIG;
  }
  if (error instanceof CliFailure) {
    io.stderr(`switchyard: ${error.message}`);
    return error.exitCode;
  }
  const newerSchema = causeOfKind(error, NewerSchemaError);
  if (newerSchema !== null) {
    io.stderr(`switchyard: ${newerSchema.message}`);
    return EXIT_NEWER_SCHEMA;
  }
  io.stderr(`switchyard: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
}

/** The error itself or the first of its causes that is of the kind asked for (the gateway wraps what the store throws). */
function causeOfKind<T extends Error>(error: unknown, kind: new (...args: never[]) => T): T | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof kind) return current;
  }
  return null;
}

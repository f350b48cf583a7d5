import { allPages, TeamService } from '../access/index.js';
import { teamToWire } from '../api/team-wire.js';
import { refusalsAsFailures } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { withStores, type ConfigOption } from './cli-stores.js';
import { formatLimits, limitChangesFromFlags, limitsFromFlags, type LimitFlags } from './limit-options.js';
import { printTable } from './print-table.js';

export interface TeamOptions extends ConfigOption, LimitFlags {
  name?: string;
}

/**
 * The TeamService the admin API calls, over the database the gateway uses. Every change bumps
 * the tokens' revision, so running gateways reload the limits they enforce at once.
 */
export function withTeams<T>(options: ConfigOption, io: CliIo, action: (teams: TeamService) => Promise<T>): Promise<T> {
  return withStores(options, io, (stores) => refusalsAsFailures(() => action(new TeamService(stores.teams))));
}

export async function createTeamCommand(id: string, options: TeamOptions, io: CliIo): Promise<number> {
  const limits = limitsFromFlags(options);
  const team = await withTeams(options, io, (teams) => teams.createTeam({ id, name: options.name ?? null, limits }));
  io.stderr(`Created team ${team.id} (limits: ${formatLimits(team.limits)}).`);
  io.stdout(team.id);
  return 0;
}

export async function listTeamsCommand(options: ConfigOption & { json?: boolean }, io: CliIo): Promise<number> {
  const records = await withTeams(options, io, (teams) => allPages((page) => teams.listTeams(page)));
  if (options.json === true) {
    io.stdout(JSON.stringify(records.map(teamToWire), null, 2));
    return 0;
  }
  printTable(
    ['ID', 'NAME', 'LIMITS', 'CREATED'],
    records.map((team) => [team.id, team.name, formatLimits(team.limits), new Date(team.createdAt).toISOString()]),
    io,
  );
  return 0;
}

export async function updateTeamCommand(id: string, options: TeamOptions, io: CliIo): Promise<number> {
  const limits = limitChangesFromFlags(options);
  const team = await withTeams(options, io, (teams) => teams.updateTeam(id, { ...(options.name === undefined ? {} : { name: options.name }), limits }));
  io.stdout(`Updated team ${team.id} (limits: ${formatLimits(team.limits)}).`);
  return 0;
}

export async function deleteTeamCommand(id: string, options: ConfigOption, io: CliIo): Promise<number> {
  await withTeams(options, io, (teams) => teams.deleteTeam(id));
  io.stdout(`Deleted team ${id} and its projects.`);
  return 0;
}

import { allPages } from '../access/index.js';
import { projectToWire } from '../api/team-wire.js';
import type { CliIo } from './cli-io.js';
import type { ConfigOption } from './cli-stores.js';
import { formatLimits, limitChangesFromFlags, limitsFromFlags } from './limit-options.js';
import { printTable } from './print-table.js';
import { withTeams, type TeamOptions } from './teams-command.js';

export interface ProjectOptions extends TeamOptions {
  /** The team the project belongs to; it must exist (a project never creates its team). */
  team: string;
}

export async function createProjectCommand(id: string, options: ProjectOptions, io: CliIo): Promise<number> {
  const limits = limitsFromFlags(options);
  const project = await withTeams(options, io, (teams) => teams.createProject(options.team, { id, name: options.name ?? null, limits }));
  io.stderr(`Created project ${project.id} in team ${project.team} (limits: ${formatLimits(project.limits)}).`);
  io.stdout(project.id);
  return 0;
}

export async function listProjectsCommand(options: ConfigOption & { team: string; json?: boolean }, io: CliIo): Promise<number> {
  const records = await withTeams(options, io, (teams) => allPages((page) => teams.listProjects(options.team, page)));
  if (options.json === true) {
    io.stdout(JSON.stringify(records.map(projectToWire), null, 2));
    return 0;
  }
  printTable(
    ['ID', 'TEAM', 'NAME', 'LIMITS', 'CREATED'],
    records.map((project) => [project.id, project.team, project.name, formatLimits(project.limits), new Date(project.createdAt).toISOString()]),
    io,
  );
  return 0;
}

export async function updateProjectCommand(id: string, options: ProjectOptions, io: CliIo): Promise<number> {
  const limits = limitChangesFromFlags(options);
  const project = await withTeams(options, io, (teams) =>
    teams.updateProject(options.team, id, { ...(options.name === undefined ? {} : { name: options.name }), limits }),
  );
  io.stdout(`Updated project ${project.id} of team ${project.team} (limits: ${formatLimits(project.limits)}).`);
  return 0;
}

export async function deleteProjectCommand(id: string, options: ConfigOption & { team: string }, io: CliIo): Promise<number> {
  await withTeams(options, io, (teams) => teams.deleteProject(options.team, id));
  io.stdout(`Deleted project ${id} of team ${options.team}.`);
  return 0;
}

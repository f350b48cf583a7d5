import { Type } from '@sinclair/typebox';
import type { TeamService } from '../../access/index.js';
import { limitChangesFromWire } from '../../api/limit-changes-schema.js';
import { limitsFromWire } from '../../api/limits-schema.js';
import { ListSchema, listBody, PageQuerySchema, PathId } from '../../api/list-wire.js';
import {
  NewTeamSchema,
  ProjectSchema,
  projectToWire,
  TeamSchema,
  TeamUpdateSchema,
  teamToWire,
  type NewTeamBody,
  type TeamUpdateBody,
} from '../../api/team-wire.js';
import type { AdminInput, AdminRoute } from '../admin-route.js';
import { DeletedSchema, pageRequest } from './route-parts.js';

const TeamParams = Type.Object({ id: PathId('the team id') });
const TeamOfProjectsParams = Type.Object({ team: PathId('the team id') });
const ProjectParams = Type.Object({ team: PathId('the team id'), id: PathId('the project id') });

const newTeam = (body: NewTeamBody) => ({
  id: body.id,
  name: body.name ?? null,
  ...(body.limits === undefined ? {} : { limits: limitsFromWire(body.limits) }),
});
const teamUpdate = (body: TeamUpdateBody) => ({
  ...(body.name === undefined ? {} : { name: body.name }),
  ...(body.limits === undefined ? {} : { limits: limitChangesFromWire(body.limits) }),
});
const param = (input: AdminInput, name: string): string => input.params[name] as string;

/** Teams and their projects (`/admin/v1/teams…`), over the TeamService the CLI calls too. */
export function teamRoutes(teams: TeamService): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/admin/v1/teams',
      operationId: 'listTeams',
      summary: 'List teams, by id',
      tag: 'teams',
      query: PageQuerySchema,
      response: ListSchema(TeamSchema),
      handle: async (input) => listBody(await teams.listTeams(pageRequest(input)), teamToWire),
    },
    {
      method: 'POST',
      path: '/admin/v1/teams',
      operationId: 'createTeam',
      summary: 'Create a team',
      tag: 'teams',
      body: NewTeamSchema,
      response: TeamSchema,
      status: 201,
      handle: async (input) => teamToWire(await teams.createTeam(newTeam(input.body as NewTeamBody))),
    },
    {
      method: 'GET',
      path: '/admin/v1/teams/{id}',
      operationId: 'getTeam',
      summary: 'Get a team',
      tag: 'teams',
      params: TeamParams,
      response: TeamSchema,
      handle: async (input) => teamToWire(await teams.getTeam(param(input, 'id'))),
    },
    {
      method: 'PATCH',
      path: '/admin/v1/teams/{id}',
      operationId: 'updateTeam',
      summary: "Change a team's name or limits (limits: a merge patch, null removes one)",
      tag: 'teams',
      params: TeamParams,
      body: TeamUpdateSchema,
      response: TeamSchema,
      handle: async (input) => teamToWire(await teams.updateTeam(param(input, 'id'), teamUpdate(input.body as TeamUpdateBody))),
    },
    {
      method: 'DELETE',
      path: '/admin/v1/teams/{id}',
      operationId: 'deleteTeam',
      summary: 'Delete a team and its projects; refused (409, naming them) while it has live tokens',
      tag: 'teams',
      params: TeamParams,
      response: DeletedSchema,
      handle: async (input) => {
        await teams.deleteTeam(param(input, 'id'));
        return { id: param(input, 'id'), deleted: true };
      },
    },
    {
      method: 'GET',
      path: '/admin/v1/teams/{team}/projects',
      operationId: 'listProjects',
      summary: "List a team's projects, by id",
      tag: 'projects',
      params: TeamOfProjectsParams,
      query: PageQuerySchema,
      response: ListSchema(ProjectSchema),
      handle: async (input) => listBody(await teams.listProjects(param(input, 'team'), pageRequest(input)), projectToWire),
    },
    {
      method: 'POST',
      path: '/admin/v1/teams/{team}/projects',
      operationId: 'createProject',
      summary: 'Create a project in a team (an unknown team is refused with 422: it is never created)',
      tag: 'projects',
      params: TeamOfProjectsParams,
      body: NewTeamSchema,
      response: ProjectSchema,
      status: 201,
      handle: async (input) => projectToWire(await teams.createProject(param(input, 'team'), newTeam(input.body as NewTeamBody))),
    },
    {
      method: 'GET',
      path: '/admin/v1/teams/{team}/projects/{id}',
      operationId: 'getProject',
      summary: 'Get a project',
      tag: 'projects',
      params: ProjectParams,
      response: ProjectSchema,
      handle: async (input) => projectToWire(await teams.getProject(param(input, 'team'), param(input, 'id'))),
    },
    {
      method: 'PATCH',
      path: '/admin/v1/teams/{team}/projects/{id}',
      operationId: 'updateProject',
      summary: "Change a project's name or limits (limits: a merge patch, null removes one)",
      tag: 'projects',
      params: ProjectParams,
      body: TeamUpdateSchema,
      response: ProjectSchema,
      handle: async (input) => projectToWire(await teams.updateProject(param(input, 'team'), param(input, 'id'), teamUpdate(input.body as TeamUpdateBody))),
    },
    {
      method: 'DELETE',
      path: '/admin/v1/teams/{team}/projects/{id}',
      operationId: 'deleteProject',
      summary: 'Delete a project; refused (409, naming them) while it has live tokens',
      tag: 'projects',
      params: ProjectParams,
      response: DeletedSchema,
      handle: async (input) => {
        await teams.deleteProject(param(input, 'team'), param(input, 'id'));
        return { id: param(input, 'id'), deleted: true };
      },
    },
  ];
}

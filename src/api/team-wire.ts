import { Type, type Static } from '@sinclair/typebox';
import type { ProjectRecord, TeamRecord } from '../store/index.js';
import { LimitChangesSchema } from './limit-changes-schema.js';
import { LimitsSchema, limitsToWire } from './limits-schema.js';
import { IsoTime, isoTime } from './list-wire.js';

/**
 * Team, project (and other created) ids: 1 to 128 of A-Z a-z 0-9 . _ -, starting with a letter
 * or digit. They are path segments of the admin API, so `.` and `..` (which clients normalise
 * away) and anything needing escapes are out.
 */
export const ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';

const Name = Type.String({ minLength: 1, maxLength: 200, description: 'shown to people; the id when absent' });

/** `POST /admin/v1/teams` and `POST /admin/v1/teams/{team}/projects`. */
export const NewTeamSchema = Type.Object(
  {
    id: Type.String({ pattern: ID_PATTERN, description: 'the id tokens carry; 1 to 128 of A-Z a-z 0-9 . _ -' }),
    name: Type.Optional(Name),
    limits: Type.Optional(LimitsSchema),
  },
  { additionalProperties: false },
);
export type NewTeamBody = Static<typeof NewTeamSchema>;

/** `PATCH`: `limits` is a merge patch (a number sets a limit, null removes it, an absent one is kept). */
export const TeamUpdateSchema = Type.Object({ name: Type.Optional(Name), limits: Type.Optional(LimitChangesSchema) }, { additionalProperties: false });
export type TeamUpdateBody = Static<typeof TeamUpdateSchema>;

const common = {
  name: Type.String(),
  limits: LimitsSchema,
  created_at: IsoTime('when it was created'),
  updated_at: IsoTime('when it last changed'),
};

export const TeamSchema = Type.Object({ id: Type.String(), ...common }, { additionalProperties: false });
export const ProjectSchema = Type.Object({ id: Type.String(), team: Type.String(), ...common }, { additionalProperties: false });
export type TeamBody = Static<typeof TeamSchema>;
export type ProjectBody = Static<typeof ProjectSchema>;

export function teamToWire(team: TeamRecord): TeamBody {
  return { id: team.id, name: team.name, limits: limitsToWire(team.limits), created_at: isoTime(team.createdAt), updated_at: isoTime(team.updatedAt) };
}

export function projectToWire(project: ProjectRecord): ProjectBody {
  return {
    id: project.id,
    team: project.team,
    name: project.name,
    limits: limitsToWire(project.limits),
    created_at: isoTime(project.createdAt),
    updated_at: isoTime(project.updatedAt),
  };
}

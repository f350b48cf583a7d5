import type { Limits } from '../store/index.js';

export type HolderKind = 'token' | 'project' | 'team';

/** Whose limits these are: a token, a project of a team, or a team. */
export interface LimitHolder {
  readonly kind: HolderKind;
  /** Unique among holders of every kind: the prefix of its meters' keys. */
  readonly key: string;
  /** As a caller reads it in a 429's message: `token tok_…`, `project "ranker" of team "search"`, `team "search"`. */
  readonly label: string;
  /** What the request log's columns hold for it, to rebuild its spending. */
  readonly match: SpendMatch;
  readonly limits: Limits;
}

/** The request log rows that count against a holder. */
export interface SpendMatch {
  tokenId?: string;
  team?: string;
  project?: string;
}

/** The team and project limits the token cache carries, keyed by team id and by `team/project`. */
export interface HolderLimits {
  teams: ReadonlyMap<string, Limits>;
  projects: ReadonlyMap<string, Limits>;
}

export function projectKey(team: string, project: string): string {
  return `${team}/${project}`;
}

/** The holders whose limits apply to a token's requests, those with no limit left out: token, project, team. */
export function holdersOf(token: { id: string; team: string; project: string | null; limits: Limits }, limits: HolderLimits): readonly LimitHolder[] {
  const holders: LimitHolder[] = [];
  if (hasAny(token.limits))
    holders.push({ kind: 'token', key: `token:${token.id}`, label: `token ${token.id}`, match: { tokenId: token.id }, limits: token.limits });
  if (token.project !== null) {
    const projectLimits = limits.projects.get(projectKey(token.team, token.project));
    if (projectLimits !== undefined && hasAny(projectLimits)) {
      holders.push({
        kind: 'project',
        key: `project:${projectKey(token.team, token.project)}`,
        label: `project ${JSON.stringify(token.project)} of team ${JSON.stringify(token.team)}`,
        match: { team: token.team, project: token.project },
        limits: projectLimits,
      });
    }
  }
  const teamLimits = limits.teams.get(token.team);
  if (teamLimits !== undefined && hasAny(teamLimits)) {
    holders.push({ kind: 'team', key: `team:${token.team}`, label: `team ${JSON.stringify(token.team)}`, match: { team: token.team }, limits: teamLimits });
  }
  return holders;
}

/** The limits that are quotas (a period's spending, or all of it), not rates or slots. */
export const QUOTA_LIMITS = ['tokensPerDay', 'tokensPerMonth', 'tokensTotal', 'usdPerDay', 'usdPerMonth'] as const satisfies ReadonlyArray<keyof Limits>;

/** Every team and project with a quota, as holders of those quotas alone (the metrics' quota gauges). */
export function quotaHolders(limits: HolderLimits): LimitHolder[] {
  const holders: LimitHolder[] = [];
  for (const [team, teamLimits] of limits.teams) {
    const quotas = quotasOf(teamLimits);
    if (quotas !== null) holders.push({ kind: 'team', key: `team:${team}`, label: `team ${JSON.stringify(team)}`, match: { team }, limits: quotas });
  }
  for (const [key, projectLimits] of limits.projects) {
    const quotas = quotasOf(projectLimits);
    const slash = key.indexOf('/');
    const team = key.slice(0, slash);
    const project = key.slice(slash + 1);
    if (quotas !== null)
      holders.push({
        kind: 'project',
        key: `project:${key}`,
        label: `project ${JSON.stringify(project)} of team ${JSON.stringify(team)}`,
        match: { team, project },
        limits: quotas,
      });
  }
  return holders;
}

function quotasOf(limits: Limits): Limits | null {
  let quotas: Limits | null = null;
  for (const name of QUOTA_LIMITS) if (limits[name] !== undefined) (quotas ??= {})[name] = limits[name];
  return quotas;
}

function hasAny(limits: Limits): boolean {
  for (const value of Object.values(limits)) if (value !== undefined) return true;
  return false;
}

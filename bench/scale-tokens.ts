import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The scale bench's teams and tokens, made before the gateway starts, by the services the CLI
 * and the admin API call (`TeamService.createTeam`, `TokenService.create` of the built dist/), in
 * one process: the CLI's own path, batched. Each create checks its input, is one transaction and
 * bumps the tokens' revision, as `switchyard tokens create` does; no row is written by hand.
 *
 * Why not the admin API: every create there reloads the gateway's whole token cache before it
 * answers (`TokenAuthenticator.invalidate`), so making n tokens costs O(n²); measured, 10,000 were
 * not done after 5 minutes. Why not the CLI: no batch mode, and a process per token (~0.3 s).
 * The bench is compiled on its own (rootDir bench/), hence these structural types.
 */

/** Every team's limits (the services' names): each counted on every request, none ever reached in a run. */
export const TEAM_LIMITS = {
  rpm: 1_000_000_000,
  tpm: 1_000_000_000_000,
  tokensPerDay: 1_000_000_000_000,
  tokensPerMonth: 1_000_000_000_000,
} as const;

interface BuiltStores {
  tokens: unknown;
  teams: unknown;
  close(): Promise<void>;
}
interface TeamServiceInstance {
  createTeam(input: { id: string; limits: typeof TEAM_LIMITS }): Promise<unknown>;
}
interface TokenServiceInstance {
  create(input: { team: string; name: string }): Promise<{ secret: string }>;
}
interface AccessModule {
  TeamService: new (store: unknown) => TeamServiceInstance;
  TokenService: new (store: unknown, prefix: string) => TokenServiceInstance;
}
interface StoreModule {
  openStores(url: string): Promise<BuiltStores>;
}
interface ConfigModule {
  loadCommonConfig(options: { configPath: string }): { config: { database: { url: string }; auth: { token_prefix: string } } };
}

export interface MadeTokens {
  /** The tokens' secrets, team by team (team 0's tokens first). */
  secrets: string[];
  teams: number;
  seconds: number;
}

async function built<T>(root: string, path: string): Promise<T> {
  const file = join(root, 'dist', path);
  if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  return (await import(pathToFileURL(file).href)) as T;
}

/**
 * `teams` teams with TEAM_LIMITS, each with `tokensPerTeam` tokens, in the database of the config
 * at `configPath` (read as the CLI reads it: its database and token prefix). Call it while no
 * gateway serves that database, so that none runs on a cache it has not loaded yet.
 */
export async function makeTeamsAndTokens(root: string, configPath: string, teams: number, tokensPerTeam: number): Promise<MadeTokens> {
  const startedAt = performance.now();
  const { loadCommonConfig } = await built<ConfigModule>(root, 'config/index.js');
  const { openStores } = await built<StoreModule>(root, 'store/index.js');
  const { TeamService, TokenService } = await built<AccessModule>(root, 'access/index.js');
  const { config } = loadCommonConfig({ configPath });
  const stores = await openStores(config.database.url);
  try {
    const teamService = new TeamService(stores.teams);
    const tokenService = new TokenService(stores.tokens, config.auth.token_prefix);
    const teamId = (index: number) => `scale-team-${String(index).padStart(4, '0')}`;
    const secrets: string[] = [];
    for (let team = 0; team < teams; team++) {
      await teamService.createTeam({ id: teamId(team), limits: TEAM_LIMITS });
      for (let token = 0; token < tokensPerTeam; token++) {
        secrets.push((await tokenService.create({ team: teamId(team), name: `scale-token-${team * tokensPerTeam + token}` })).secret);
      }
    }
    return { secrets, teams, seconds: (performance.now() - startedAt) / 1_000 };
  } finally {
    await stores.close();
  }
}

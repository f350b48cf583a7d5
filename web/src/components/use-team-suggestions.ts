import { useEffect, useState } from 'react';
import { ApiError, isAbort } from '../api/http';
import { listProjects, listTeams } from '../api/tokens';

/**
 * Existing teams, and the projects of the team typed (once it is one of them), for the token
 * form's datalists. A failure here only costs the suggestions, so it is reported beside the
 * field rather than blocking the form.
 */
export function useTeamSuggestions(team: string): { teams: string[]; projects: string[]; error: string | null } {
  const [teams, setTeams] = useState<string[]>([]);
  const [projects, setProjects] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const abort = new AbortController();
    listTeams(abort.signal).then(
      (page) => setTeams(page.data.map((item) => item.id)),
      (failure: unknown) => {
        if (!isAbort(failure)) setError(`Team suggestions unavailable: ${failure instanceof Error ? failure.message : String(failure)}`);
      },
    );
    return () => abort.abort();
  }, []);

  const known = teams.includes(team.trim());
  useEffect(() => {
    setProjects([]);
    if (!known) return;
    const abort = new AbortController();
    listProjects(team.trim(), abort.signal).then(
      (page) => setProjects(page.data.map((item) => item.id)),
      (failure: unknown) => {
        if (isAbort(failure)) return;
        // Deleted since the teams were listed: nothing to suggest.
        if (failure instanceof ApiError && failure.status === 404) return;
        setError(`Project suggestions unavailable: ${failure instanceof Error ? failure.message : String(failure)}`);
      },
    );
    return () => abort.abort();
  }, [team, known]);

  return { teams, projects, error };
}

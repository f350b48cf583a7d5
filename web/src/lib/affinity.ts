/** One line on what a session's affinity decision means for its upstream's prompt cache. */
export const AFFINITY_EXPLANATIONS: Record<string, string> = {
  new: "The session's first request (or its binding had expired): it was bound to this credential.",
  kept: 'Served by the credential the session is bound to, where its prompt cache is warm.',
  moved:
    "The session's credential was cooling, failed, disabled or failed during this request: the session now lives on this credential, and its prompt cache starts cold here.",
  overflow: 'The bound credential was at its max_in_flight: this one request was served elsewhere, and the binding was kept.',
};

export function explainAffinity(affinity: string | null): string {
  if (affinity === null) return 'No session: routed by the strategy alone.';
  return AFFINITY_EXPLANATIONS[affinity] ?? `Affinity decision "${affinity}".`;
}

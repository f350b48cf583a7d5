/** An HTTP status coloured by class, so errors stand out in a long table. */
export function StatusBadge({ status }: { status: number }) {
  const tone = status >= 500 ? 'bad' : status === 429 ? 'warn' : status >= 400 ? 'warn' : 'ok';
  return <span className={`badge badge-${tone}`}>{status}</span>;
}

const AFFINITY_TONES: Record<string, string> = { moved: 'warn', overflow: 'warn', new: 'info', kept: 'neutral' };

export function AffinityBadge({ affinity }: { affinity: string | null }) {
  if (affinity === null) return <span className="muted">—</span>;
  return <span className={`badge badge-${AFFINITY_TONES[affinity] ?? 'neutral'}`}>{affinity}</span>;
}

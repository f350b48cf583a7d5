import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { ApiError, errorMessage, isAbort } from '../api/http';
import { getSession } from '../api/requests';
import type { RequestView } from '../api/types';
import { SessionTurnsTable } from '../components/session-turns-table';
import { Empty, ErrorAlert, Loading, LoadMore } from '../components/states';
import { consolePath, navigate } from '../lib/router';
import { summarise, type SessionSummary } from '../lib/session-summary';

type Loaded = { found: false } | { found: true; turns: RequestView[]; cursor: string | null };

export function SessionsPage({ sessionId }: { sessionId: string | null }) {
  const [typed, setTyped] = useState(sessionId ?? '');
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);

  useEffect(() => {
    if (sessionId === null) return;
    const abort = new AbortController();
    getSession(sessionId, null, abort.signal).then(
      (session) => setLoaded({ found: true, turns: session.turns, cursor: session.next_cursor }),
      (failure: unknown) => {
        if (isAbort(failure)) return;
        // A session is known only by its requests: none is an answer, not a failure.
        if (failure instanceof ApiError && failure.code === 'session_not_found') setLoaded({ found: false });
        else setError(errorMessage(failure));
      },
    );
    return () => abort.abort();
  }, [sessionId]);

  const search = (event: FormEvent) => {
    event.preventDefault();
    const id = typed.trim();
    if (id !== '') navigate(consolePath('sessions', id));
  };

  const loadMore = async () => {
    if (sessionId === null || loaded?.found !== true || loaded.cursor === null) return;
    setLoadingMore(true);
    setError(null);
    try {
      const page = await getSession(sessionId, loaded.cursor);
      setLoaded((current) => (current?.found === true ? { found: true, turns: [...current.turns, ...page.turns], cursor: page.next_cursor } : current));
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setLoadingMore(false);
    }
  };

  const turns = loaded?.found === true ? loaded.turns : null;
  const summary = useMemo(() => (turns === null ? null : summarise(turns)), [turns]);

  return (
    <>
      <h1>Sessions</h1>
      <form className="inline-form" role="search" aria-label="Find a session" onSubmit={search}>
        <div className="field">
          <label htmlFor="session-search">Session id</label>
          <input id="session-search" type="text" value={typed} onChange={(event) => setTyped(event.target.value)} autoComplete="off" />
        </div>
        <button type="submit" className="primary">
          Search
        </button>
      </form>
      {sessionId === null ? (
        <p className="hint">Enter a session id (the X-Session-Id a client sent, or an inferred inf_… id) to see its turns and where its prompt cache went.</p>
      ) : (
        <>
          <h2 className="mono session-id">{sessionId}</h2>
          <ErrorAlert message={error} />
          {loaded === null ? (
            error === null && <Loading />
          ) : !loaded.found ? (
            <Empty>No requests with this session id.</Empty>
          ) : (
            <>
              {summary !== null && <SummaryBox summary={summary} more={loaded.cursor !== null} />}
              <SessionTurnsTable turns={loaded.turns} losses={summary?.losses ?? new Map()} />
              <LoadMore visible={loaded.cursor !== null} loading={loadingMore} onClick={() => void loadMore()} />
            </>
          )}
        </>
      )}
    </>
  );
}

function SummaryBox({ summary, more }: { summary: SessionSummary; more: boolean }) {
  const losses = [...summary.losses.values()];
  return (
    <section className="summary" aria-label="Session summary">
      <ul className="summary-stats">
        <li>
          <strong>{summary.turns}</strong>
          {more ? '+' : ''} turns
        </li>
        <li>
          <strong>{summary.credentials.length}</strong> credential{summary.credentials.length === 1 ? '' : 's'}
          {summary.credentials.length > 0 && <span className="muted"> ({summary.credentials.join(', ')})</span>}
        </li>
        <li>
          <strong>{summary.moves}</strong> move{summary.moves === 1 ? '' : 's'}
        </li>
        {summary.overflows > 0 && (
          <li>
            <strong>{summary.overflows}</strong> overflow{summary.overflows === 1 ? '' : 's'}
          </li>
        )}
      </ul>
      {losses.length === 0 ? (
        <p className="muted">
          {!summary.cacheReported
            ? 'The upstream reported no cached tokens for these turns, so cache losses cannot be told.'
            : summary.everCached
              ? `The prompt cache was never lost${more ? ' in the turns shown' : ''}.`
              : 'No turn read from the upstream’s prompt cache.'}
        </p>
      ) : (
        <ul className="losses">
          {losses.map((loss) => (
            <li key={loss.index}>
              Turn {loss.index + 1}: cache lost — {loss.reason}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

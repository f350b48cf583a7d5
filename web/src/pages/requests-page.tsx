import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { errorMessage, isAbort } from '../api/http';
import { listRequests, type RequestFilters } from '../api/requests';
import type { RequestView } from '../api/types';
import { RequestFiltersForm } from '../components/request-filters-form';
import { RequestTable } from '../components/request-table';
import { Empty, ErrorAlert, Loading, LoadMore } from '../components/states';
import { mergeFirstPage } from '../lib/merge-requests';
import { filtersToSearch, readFilters } from '../lib/request-filters';
import { navigate, useLocation } from '../lib/router';
import { usePolling } from '../lib/use-polling';

const POLL_MS = 3_000;

interface Loaded {
  rows: RequestView[];
  cursor: string | null;
  pages: number;
}

export function RequestsPage() {
  const { search } = useLocation();
  const searchText = search.toString();
  const filters = useMemo(() => readFilters(new URLSearchParams(searchText)), [searchText]);
  const filterKey = filtersToSearch(filters);

  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pollError, setPollError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [live, setLive] = useState(true);
  const [reloads, setReloads] = useState(0);
  const filtersRef = useRef<RequestFilters>(filters);
  filtersRef.current = filters;

  useEffect(() => {
    const abort = new AbortController();
    setLoaded(null);
    setError(null);
    setPollError(null);
    listRequests(filtersRef.current, null, abort.signal).then(
      (page) => setLoaded({ rows: page.data, cursor: page.next_cursor, pages: 1 }),
      (failure: unknown) => {
        if (!isAbort(failure)) setError(errorMessage(failure));
      },
    );
    return () => abort.abort();
  }, [filterKey, reloads]);

  const poll = useCallback(async () => {
    const asked = filterKey;
    try {
      const page = await listRequests(filtersRef.current, null);
      // The filters changed while this was in flight: its rows are of another view.
      if (filtersToSearch(filtersRef.current) !== asked) return;
      setPollError(null);
      setLoaded((current) => {
        if (current === null || current.pages !== 1) return current;
        const merged = mergeFirstPage(current.rows, page.data, page.next_cursor !== null);
        if (!merged.changed) return current;
        return { rows: merged.rows, cursor: merged.replaced || current.rows.length === 0 ? page.next_cursor : current.cursor, pages: 1 };
      });
    } catch (failure) {
      setPollError(`Live update failed: ${errorMessage(failure)}`);
    }
  }, [filterKey]);

  const firstPageOnly = loaded !== null && loaded.pages === 1;
  usePolling(poll, POLL_MS, live && firstPageOnly);

  const loadMore = async () => {
    if (loaded?.cursor == null) return;
    setLoadingMore(true);
    setError(null);
    try {
      const page = await listRequests(filters, loaded.cursor);
      setLoaded((current) => {
        if (current === null) return current;
        const known = new Set(current.rows.map((row) => row.id));
        return { rows: [...current.rows, ...page.data.filter((row) => !known.has(row.id))], cursor: page.next_cursor, pages: current.pages + 1 };
      });
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setLoadingMore(false);
    }
  };

  const apply = (next: RequestFilters) => navigate(`/console/requests${filtersToSearch(next)}`);

  return (
    <>
      <div className="page-head">
        <h1>Requests</h1>
        <label className="check live-toggle">
          <input type="checkbox" checked={live} onChange={(event) => setLive(event.target.checked)} />
          <span>Live</span>
        </label>
      </div>
      <RequestFiltersForm key={filterKey} filters={filters} onApply={apply} onClear={() => navigate('/console/requests')} />
      {live && loaded !== null && !firstPageOnly && (
        <p className="hint">
          Live updates pause while older pages are shown.{' '}
          <button type="button" className="link-button" onClick={() => setReloads((count) => count + 1)}>
            Show the newest only
          </button>
        </p>
      )}
      <ErrorAlert message={error} />
      <ErrorAlert message={pollError} />
      <div aria-busy={loaded === null && error === null}>
        {loaded === null ? (
          error === null && <Loading />
        ) : loaded.rows.length === 0 ? (
          <Empty>No requests match these filters.</Empty>
        ) : (
          <RequestTable rows={loaded.rows} />
        )}
      </div>
      <LoadMore visible={loaded?.cursor != null} loading={loadingMore} onClick={() => void loadMore()} />
    </>
  );
}

import { useCallback, useEffect, useState } from 'react';
import { changeCredential, listCredentials, type CredentialAction } from '../api/credentials';
import { errorMessage, isAbort } from '../api/http';
import type { Credential } from '../api/types';
import { CredentialRow } from '../components/credential-row';
import { DataTable, type Column } from '../components/data-table';
import { Empty, ErrorAlert, Loading } from '../components/states';
import { usePolling } from '../lib/use-polling';

const REFRESH_MS = 5_000;
const COLUMNS: readonly Column[] = [
  { label: 'Id' },
  { label: 'Provider' },
  { label: 'State' },
  { label: 'Since' },
  { label: 'In flight', numeric: true },
  { label: 'Recent errors' },
  { label: 'Recent latency', numeric: true },
  { label: 'Last error' },
  { label: 'Origin' },
  { label: 'Account' },
  { label: 'Actions', hidden: true },
];

export function CredentialsPage() {
  const [credentials, setCredentials] = useState<Credential[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [refreshError, setRefreshError] = useState<string | null>(null);
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set());

  useEffect(() => {
    const abort = new AbortController();
    listCredentials(abort.signal).then(
      (page) => setCredentials(page.data),
      (failure: unknown) => {
        if (!isAbort(failure)) setError(errorMessage(failure));
      },
    );
    return () => abort.abort();
  }, []);

  const refresh = useCallback(async () => {
    try {
      const page = await listCredentials();
      setRefreshError(null);
      // Unchanged credentials keep their objects, so their memoised rows skip the render.
      setCredentials((current) => {
        const known = new Map((current ?? []).map((item) => [item.id, item]));
        return page.data.map((item) => {
          const before = known.get(item.id);
          return before !== undefined && JSON.stringify(before) === JSON.stringify(item) ? before : item;
        });
      });
    } catch (failure) {
      setRefreshError(`Refresh failed: ${errorMessage(failure)}`);
    }
  }, []);
  usePolling(refresh, REFRESH_MS, credentials !== null);

  const act = useCallback(async (id: string, action: CredentialAction) => {
    setBusy((current) => new Set(current).add(id));
    setError(null);
    try {
      const changed = await changeCredential(id, action);
      setCredentials((current) => current?.map((item) => (item.id === changed.id ? changed : item)) ?? null);
    } catch (failure) {
      setError(`${id}: ${errorMessage(failure)}`);
    } finally {
      setBusy((current) => {
        const next = new Set(current);
        next.delete(id);
        return next;
      });
    }
  }, []);
  const onAction = useCallback((id: string, action: CredentialAction) => void act(id, action), [act]);

  return (
    <>
      <div className="page-head">
        <h1>Credentials</h1>
        <p className="hint">Refreshed every 5 s. Error rates count this gateway process's attempts only.</p>
      </div>
      <ErrorAlert message={error} />
      <ErrorAlert message={refreshError} />
      {credentials === null ? (
        error === null && <Loading />
      ) : credentials.length === 0 ? (
        <Empty>No upstream credentials are configured.</Empty>
      ) : (
        <DataTable columns={COLUMNS}>
          {credentials.map((credential) => (
            <CredentialRow key={credential.id} credential={credential} busy={busy.has(credential.id)} onAction={onAction} />
          ))}
        </DataTable>
      )}
    </>
  );
}

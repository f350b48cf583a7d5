import { useCallback, useEffect, useRef, useState } from 'react';
import { errorMessage, isAbort } from '../api/http';
import { listTokens } from '../api/tokens';
import type { Token } from '../api/types';
import { DataTable, type Column } from '../components/data-table';
import { SettingsNav } from '../components/settings-nav';
import { Empty, ErrorAlert, Loading, LoadMore } from '../components/states';
import { TokenCreateDialog } from '../components/token-create-dialog';
import { TokenEditDialog } from '../components/token-edit-dialog';
import { TokenRevokeDialog } from '../components/token-revoke-dialog';
import { TokenRow } from '../components/token-row';

const COLUMNS: readonly Column[] = [
  { label: 'Name' },
  { label: 'Team' },
  { label: 'Project' },
  { label: 'Scopes' },
  { label: 'Models' },
  { label: 'Limits' },
  { label: 'Last used' },
  { label: 'Expires' },
  { label: 'Status' },
  { label: 'Actions', hidden: true },
];

type Open = { kind: 'create' } | { kind: 'edit'; token: Token } | { kind: 'revoke'; token: Token } | null;

export function TokensPage() {
  const [tokens, setTokens] = useState<Token[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<Open>(null);
  const cursorRef = useRef(cursor);
  cursorRef.current = cursor;

  useEffect(() => {
    const abort = new AbortController();
    listTokens(null, abort.signal).then(
      (page) => {
        setTokens(page.data);
        setCursor(page.next_cursor);
      },
      (failure: unknown) => {
        if (!isAbort(failure)) setError(errorMessage(failure));
      },
    );
    return () => abort.abort();
  }, []);

  const loadMore = async () => {
    if (cursor === null) return;
    setLoadingMore(true);
    setError(null);
    try {
      const page = await listTokens(cursor);
      setTokens((current) => [...(current ?? []), ...page.data.filter((token) => !(current ?? []).some((known) => known.id === token.id))]);
      setCursor(page.next_cursor);
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setLoadingMore(false);
    }
  };

  // Merged, not swapped: an answer without a field the list had (last_used_at) keeps the list's.
  const replace = useCallback(
    (changed: Token) => setTokens((current) => current?.map((token) => (token.id === changed.id ? { ...token, ...changed } : token)) ?? null),
    [],
  );
  // The list is in creation order: a new token belongs at its end, which is shown once every page is.
  const add = useCallback((created: Token) => {
    if (cursorRef.current !== null) return;
    const { secret: _secret, ...token } = created as Token & { secret?: string };
    setTokens((current) => [...(current ?? []), token]);
  }, []);
  const onEdit = useCallback((token: Token) => setOpen({ kind: 'edit', token }), []);
  const onRevoke = useCallback((token: Token) => setOpen({ kind: 'revoke', token }), []);
  const close = useCallback(() => setOpen(null), []);

  return (
    <>
      <SettingsNav />
      <div className="page-head">
        <h1>API Tokens</h1>
        <button type="button" className="primary" onClick={() => setOpen({ kind: 'create' })}>
          Create token
        </button>
      </div>
      <ErrorAlert message={error} />
      {tokens === null ? (
        error === null && <Loading />
      ) : tokens.length === 0 ? (
        <Empty>No tokens yet.</Empty>
      ) : (
        <DataTable columns={COLUMNS}>
          {tokens.map((token) => (
            <TokenRow key={token.id} token={token} onEdit={onEdit} onRevoke={onRevoke} />
          ))}
        </DataTable>
      )}
      <LoadMore visible={cursor !== null} loading={loadingMore} onClick={() => void loadMore()} />
      {open?.kind === 'create' && <TokenCreateDialog onCreated={add} onClose={close} />}
      {open?.kind === 'edit' && <TokenEditDialog token={open.token} onSaved={replace} onClose={close} />}
      {open?.kind === 'revoke' && <TokenRevokeDialog token={open.token} onRevoked={replace} onClose={close} />}
    </>
  );
}

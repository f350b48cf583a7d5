import type { ReactNode } from 'react';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="state state-loading" aria-busy="true" role="status">
      {label}
    </p>
  );
}

/** An error in the server's own words; role="alert" so screen readers hear it at once. */
export function ErrorAlert({ message, children }: { message: string | null; children?: ReactNode }) {
  if (message === null) return null;
  return (
    <div className="alert" role="alert">
      <span>{message}</span>
      {children}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state state-empty">{children}</p>;
}

/** "Load more" under a paged table: shown while the API has a next page. */
export function LoadMore({ visible, loading, onClick }: { visible: boolean; loading: boolean; onClick: () => void }) {
  if (!visible) return null;
  return (
    <div className="load-more">
      <button type="button" onClick={onClick} disabled={loading} aria-busy={loading}>
        {loading ? 'Loading…' : 'Load more'}
      </button>
    </div>
  );
}

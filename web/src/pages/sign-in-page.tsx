import { useState, type FormEvent } from 'react';
import { errorMessage } from '../api/http';
import { ErrorAlert } from '../components/states';
import { useSession } from '../lib/session';

/**
 * Trades an admin token for a cookie session. The token lives in this form's state only until
 * the answer: it is never stored, and the page is gone once signed in.
 */
export function SignInPage({ notice }: { notice: string | null }) {
  const { signIn } = useSession();
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(token.trim());
      setToken('');
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  };

  return (
    <main className="page sign-in">
      <form className="card sign-in-card" onSubmit={(event) => void submit(event)}>
        <p className="brand brand-large">Switchyard</p>
        <h1>Sign in</h1>
        {notice !== null && error === null && <p className="notice">{notice}</p>}
        <ErrorAlert message={error} />
        <div className="field">
          <label htmlFor="admin-token">Admin token</label>
          <input
            id="admin-token"
            type="password"
            autoComplete="off"
            spellCheck={false}
            placeholder="svc_…"
            required
            value={token}
            onChange={(event) => setToken(event.target.value)}
          />
          <p className="hint">A token with the admin scope. It is exchanged for a session and not kept by the browser.</p>
        </div>
        <button type="submit" className="primary" disabled={busy} aria-busy={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

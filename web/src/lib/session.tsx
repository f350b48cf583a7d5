import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { errorMessage, isAbort, onSessionEnded, setCsrfToken, ApiError } from '../api/http';
import { createSession, currentSession, endSession } from '../api/session';
import type { ConsoleSession } from '../api/console-types';

export type SessionState =
  | { status: 'checking' }
  /** The session check itself failed (gateway down, 5xx): not the same as "not signed in". */
  | { status: 'unavailable'; message: string }
  | { status: 'signed-out'; notice: string | null }
  | { status: 'signed-in'; session: ConsoleSession };

interface SessionApi {
  state: SessionState;
  signIn: (adminToken: string) => Promise<void>;
  signOut: () => Promise<void>;
  recheck: () => void;
}

const SessionContext = createContext<SessionApi | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: 'checking' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    currentSession(abort.signal).then(
      (probe) => {
        if (!probe.signed_in) {
          setState({ status: 'signed-out', notice: null });
          return;
        }
        const { signed_in: _signedIn, ...session } = probe;
        setCsrfToken(session.csrf_token);
        setState({ status: 'signed-in', session });
      },
      (error: unknown) => {
        if (isAbort(error)) return;
        if (error instanceof ApiError && error.status === 401) setState({ status: 'signed-out', notice: null });
        else setState({ status: 'unavailable', message: errorMessage(error) });
      },
    );
    return () => abort.abort();
  }, [attempt]);

  useEffect(() => {
    onSessionEnded((message) => setState({ status: 'signed-out', notice: `Your session has ended; sign in again. (The gateway said: ${message})` }));
    return () => onSessionEnded(null);
  }, []);

  const signIn = useCallback(async (adminToken: string) => {
    const session = await createSession(adminToken);
    setCsrfToken(session.csrf_token);
    setState({ status: 'signed-in', session });
  }, []);

  const signOut = useCallback(async () => {
    try {
      await endSession();
    } catch (error) {
      // Already ended elsewhere: the outcome the user asked for.
      if (!(error instanceof ApiError && error.status === 401)) throw error;
    }
    setCsrfToken(null);
    setState({ status: 'signed-out', notice: 'You have signed out.' });
  }, []);

  const recheck = useCallback(() => {
    setState({ status: 'checking' });
    setAttempt((count) => count + 1);
  }, []);

  const api = useMemo(() => ({ state, signIn, signOut, recheck }), [state, signIn, signOut, recheck]);
  return <SessionContext.Provider value={api}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionApi {
  const api = useContext(SessionContext);
  if (api === null) throw new Error('useSession outside SessionProvider');
  return api;
}

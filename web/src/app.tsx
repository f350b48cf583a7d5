import { useEffect, type ReactNode } from 'react';
import { AppHeader } from './components/app-header';
import { ErrorAlert, Loading } from './components/states';
import { matchPath, navigate, useLocation, type Location } from './lib/router';
import { useSession } from './lib/session';
import { CredentialsPage } from './pages/credentials-page';
import { NotFoundPage } from './pages/not-found-page';
import { RequestDetailPage } from './pages/request-detail-page';
import { RequestsPage } from './pages/requests-page';
import { SessionsPage } from './pages/sessions-page';
import { SignInPage } from './pages/sign-in-page';
import { TokensPage } from './pages/tokens-page';
import { UsagePage } from './pages/usage-page';

const SIGN_IN = '/console/sign-in';
const HOME = '/console/requests';

export function App() {
  const { state, recheck } = useSession();
  const location = useLocation();
  const atSignIn = location.pathname === SIGN_IN;

  if (state.status === 'checking') {
    return (
      <main className="page page-centered">
        <Loading />
      </main>
    );
  }
  if (state.status === 'unavailable') {
    return (
      <main className="page page-centered">
        <ErrorAlert message={state.message}>
          <button type="button" onClick={recheck}>
            Try again
          </button>
        </ErrorAlert>
      </main>
    );
  }
  if (state.status === 'signed-out') {
    // Remember the page asked for, to come back to it after signing in.
    if (!atSignIn) return <Redirect to={`${SIGN_IN}?next=${encodeURIComponent(location.href)}`} />;
    return <SignInPage notice={state.notice} />;
  }
  if (atSignIn) return <Redirect to={safeNext(location.search.get('next'))} />;

  const page = route(location);
  if (typeof page === 'string') return <Redirect to={page} />;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <AppHeader />
      <main id="main" className="page">
        {page}
      </main>
    </>
  );
}

/** The page for a path, or the path to redirect to. Keys make a page start fresh for a new id. */
function route({ pathname }: Location): ReactNode | string {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/console' || path === '/') return HOME;
  if (path === '/console/settings') return '/console/settings/tokens';
  if (path === HOME) return <RequestsPage />;
  if (path === '/console/sessions') return <SessionsPage sessionId={null} />;
  if (path === '/console/credentials') return <CredentialsPage />;
  if (path === '/console/usage') return <UsagePage />;
  if (path === '/console/settings/tokens') return <TokensPage />;
  const request = matchPath('/console/requests/:id', path);
  if (request?.['id'] !== undefined) return <RequestDetailPage key={request['id']} requestId={request['id']} />;
  const session = matchPath('/console/sessions/:id', path);
  if (session?.['id'] !== undefined) return <SessionsPage key={session['id']} sessionId={session['id']} />;
  return <NotFoundPage />;
}

/** Only a path of this console: an open redirect through ?next= would be a phishing aid. */
function safeNext(next: string | null): string {
  if (next === null || !next.startsWith('/console/') || next.startsWith('//') || next.startsWith(SIGN_IN)) return HOME;
  return next;
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

import { useEffect, useState } from 'react';
import { errorMessage } from '../api/http';
import { Link, useLocation } from '../lib/router';
import { useSession } from '../lib/session';

const SECTIONS = [
  { label: 'Requests', to: '/console/requests' },
  { label: 'Sessions', to: '/console/sessions' },
  { label: 'Credentials', to: '/console/credentials' },
  { label: 'Usage', to: '/console/usage' },
  { label: 'Settings', to: '/console/settings/tokens', prefix: '/console/settings' },
] as const;

export function AppHeader() {
  const { state, signOut } = useSession();
  const { pathname } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const [signingOut, setSigningOut] = useState(false);
  const [error, setError] = useState<string | null>(null);

  // A narrow screen's menu closes once a section is chosen.
  useEffect(() => setMenuOpen(false), [pathname]);

  const who = state.status === 'signed-in' ? state.session.token : null;
  const leave = async () => {
    setSigningOut(true);
    setError(null);
    try {
      await signOut();
    } catch (failure) {
      setError(errorMessage(failure));
      setSigningOut(false);
    }
  };

  return (
    <header className="app-header">
      <div className="app-header-bar">
        <Link to="/console/requests" className="brand">
          Switchyard
        </Link>
        <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen((open) => !open)}>
          Menu
        </button>
        <div id="main-nav" className={`app-nav ${menuOpen ? 'open' : ''}`}>
          <nav aria-label="Main">
            <ul>
              {SECTIONS.map((section) => {
                const prefix = 'prefix' in section ? section.prefix : section.to;
                const current = pathname === prefix || pathname.startsWith(`${prefix}/`);
                return (
                  <li key={section.to}>
                    <Link to={section.to} aria-current={current ? 'page' : undefined}>
                      {section.label}
                    </Link>
                  </li>
                );
              })}
            </ul>
          </nav>
          <div className="who">
            {who !== null && (
              <span className="who-name" title={`${who.id} · team ${who.team}`}>
                {who.name ?? who.id}
              </span>
            )}
            <button type="button" onClick={() => void leave()} disabled={signingOut}>
              Sign out
            </button>
          </div>
        </div>
      </div>
      {error !== null && (
        <div className="app-header-error" role="alert">
          Sign-out failed: {error}
        </div>
      )}
    </header>
  );
}

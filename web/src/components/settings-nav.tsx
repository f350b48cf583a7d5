import { Link, useLocation } from '../lib/router';

const ITEMS = [{ label: 'API Tokens', to: '/console/settings/tokens' }] as const;

export function SettingsNav() {
  const { pathname } = useLocation();
  return (
    <nav aria-label="Settings" className="sub-nav">
      <ul>
        {ITEMS.map((item) => (
          <li key={item.to}>
            <Link to={item.to} aria-current={pathname === item.to ? 'page' : undefined}>
              {item.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

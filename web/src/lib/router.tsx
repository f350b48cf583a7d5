import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** Where the console is served; every client route lives under it. */
export const BASE = '/console';

const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

const snapshot = () => window.location.pathname + window.location.search;

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === snapshot()) return;
  if (options.replace === true) window.history.replaceState(null, '', to);
  else {
    window.history.pushState(null, '', to);
    window.scrollTo(0, 0);
  }
  for (const listener of listeners) listener();
}

export interface Location {
  pathname: string;
  search: URLSearchParams;
  /** pathname + search, as typed in the address bar. */
  href: string;
}

export function useLocation(): Location {
  const href = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(href, window.location.origin);
  return { pathname: url.pathname, search: url.searchParams, href };
}

/** `/console/requests/:id` against a path: the named segments (decoded), or null when it does not match. */
export function matchPath(pattern: string, pathname: string): Record<string, string> | null {
  const want = pattern.split('/').filter((part) => part !== '');
  const have = pathname.split('/').filter((part) => part !== '');
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (const [index, part] of want.entries()) {
    const value = have[index] ?? '';
    if (part.startsWith(':')) {
      try {
        params[part.slice(1)] = decodeURIComponent(value);
      } catch {
        return null;
      }
    } else if (part !== value) return null;
  }
  return params;
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

/**
 * A real link (middle-click and "open in new tab" work) that the router follows in place on a
 * plain left click.
 */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    if (rest.target !== undefined && rest.target !== '_self') return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={follow} {...rest} />;
}

/** A path under the console's base, with each segment escaped. */
export function consolePath(...segments: string[]): string {
  return [BASE, ...segments.map((segment) => encodeURIComponent(segment))].join('/');
}

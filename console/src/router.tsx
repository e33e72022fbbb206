// Routing by the History API: every page has a URL under /console, so deep links, reloads and the back button
// work. Links are ordinary <a href> elements; a plain click is turned into pushState instead of a page load.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const base = '/console';

const changed = 'cpq:navigate';

export interface Place {
  /** The path below /console, starting with '/' ('/' for /console itself). */
  path: string;
  query: URLSearchParams;
}

function here(): Place {
  const path = location.pathname.startsWith(base) ? location.pathname.slice(base.length) : location.pathname;
  return {
    path: path === '' ? '/' : path.replace(/\/+$/, '') || '/',
    query: new URLSearchParams(location.search),
  };
}

/** A console URL: a path below /console and query parameters (empty ones left out). */
export function href(path: string, query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') search.set(name, value);
  const text = search.toString();
  return `${base}${path === '/' ? '' : path}${text ? `?${text}` : ''}`;
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  dispatchEvent(new Event(changed));
  if (!options.replace) scrollTo(0, 0);
}

/** The current place, re-rendering on every navigation and on back and forward. */
export function usePlace(): Place {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((tick) => tick + 1);
    addEventListener('popstate', update);
    addEventListener(changed, update);
    return () => {
      removeEventListener('popstate', update);
      removeEventListener(changed, update);
    };
  }, []);
  return here();
}

export function Link({
  to,
  children,
  ...rest
}: {
  to: string;
  children: ComponentChildren;
  class?: string;
  rel?: string;
  'aria-current'?: 'page' | undefined;
}) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a {...rest} href={to} onClick={onClick}>
      {children}
    </a>
  );
}

import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { BundlePage } from './pages/bundle.tsx';
import { BundlesPage } from './pages/bundles.tsx';
import { EventsPage } from './pages/events.tsx';
import { QuotePage } from './pages/quote.tsx';
import { QuotesPage } from './pages/quotes.tsx';
import { SavedQuotePage } from './pages/saved-quote.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { href, Link, type Place, usePlace } from './router.tsx';
import { onSessionChange, restore, type Session, session, signOut } from './session.ts';

function Page({ place, current }: { place: Place; current: Session }) {
  const parts = place.path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0 || (parts[0] === 'bundles' && parts.length === 1)) {
    return <BundlesPage place={place} session={current} />;
  }
  if (parts[0] === 'bundles' && parts[1] !== undefined && parts.length === 2) {
    return <BundlePage key={parts[1]} bundleId={parts[1]} session={current} />;
  }
  if (parts[0] === 'bundles' && parts[1] !== undefined && parts[2] === 'quote' && parts.length === 3) {
    return <QuotePage key={parts[1]} bundleId={parts[1]} place={place} session={current} />;
  }
  if (parts[0] === 'quotes' && parts.length === 1) return <QuotesPage place={place} session={current} />;
  if (parts[0] === 'quotes' && parts[1] !== undefined && parts.length === 2) {
    return <SavedQuotePage key={parts[1]} quoteId={parts[1]} session={current} />;
  }
  if (parts[0] === 'events' && parts.length === 1) return <EventsPage place={place} session={current} />;
  return (
    <section>
      <h1>Not found</h1>
      <p>
        The console has no page at this address. <Link to={href('/bundles')}>See the bundles</Link>.
      </p>
    </section>
  );
}

function App() {
  const place = usePlace();
  const [current, setCurrent] = useState(session());
  const [restoring, setRestoring] = useState(true);
  useEffect(() => {
    const stop = onSessionChange(() => setCurrent(session()));
    restore().finally(() => setRestoring(false));
    return stop;
  }, []);
  const section = place.path.startsWith('/events')
    ? 'events'
    : place.path.startsWith('/quotes')
      ? 'quotes'
      : 'bundles';
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link to={href('/bundles')} class="brand">
          cpq <span>console</span>
        </Link>
        {current && (
          <nav aria-label="Sections">
            <Link to={href('/bundles')} aria-current={section === 'bundles' ? 'page' : undefined}>
              Bundles
            </Link>
            <Link to={href('/quotes')} aria-current={section === 'quotes' ? 'page' : undefined}>
              Quotes
            </Link>
            <Link to={href('/events')} aria-current={section === 'events' ? 'page' : undefined}>
              Events
            </Link>
          </nav>
        )}
        {current && (
          <div class="who">
            <span>
              {current.accountId} ·{' '}
              <span data-role>
                {current.readOnly ? 'read-only key' : current.approver ? 'approver key' : 'read-write key'}
              </span>
            </span>
            <button type="button" class="secondary" onClick={() => signOut()}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main id="main">
        {restoring ? null : current === null || place.path === '/sign-in' ? (
          <SignInPage place={place} />
        ) : (
          <Page place={place} current={current} />
        )}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);

// Saved quotes, newest first: a search by number or customer (the service's `q`) and a status filter, both in the
// URL so a search can be linked; each quote links to its page.
import type { Schemas } from '@cpq/client';
import { useState } from 'preact/hooks';
import { dateTime, money } from '../format.ts';
import { href, Link, navigate, type Place } from '../router.tsx';
import { call, type Session } from '../session.ts';
import { Loading, ProblemBanner, useLoad, usePageTitle } from '../ui.tsx';

export type QuoteStatus = Schemas['QuoteStatus'];

// Keyed by the client's QuoteStatus, so a status added to the API and missing here fails the type check.
export const statusLabels: Record<QuoteStatus, string> = {
  draft: 'Draft',
  pending_approval: 'Waiting for approval',
  approved: 'Approved',
  open: 'Open',
  accepted: 'Accepted',
  declined: 'Declined',
  canceled: 'Canceled',
  superseded: 'Superseded',
  expired: 'Expired',
};

export function StatusBadge({ status }: { status: QuoteStatus }) {
  return (
    <span class={`badge quote-${status}`} data-quote-status={status}>
      {statusLabels[status]}
    </span>
  );
}

export function QuotesPage({ place, session }: { place: Place; session: Session }) {
  usePageTitle('Quotes');
  const q = place.query.get('q') ?? '';
  const status = (place.query.get('status') ?? '') as QuoteStatus | '';
  const nextKey = place.query.get('nextKey') ?? '';
  const [text, setText] = useState(q);
  const loaded = useLoad(
    async () =>
      (
        await call(
          session.api.GET('/v1/quotes', {
            params: {
              query: {
                limit: 50,
                q: q || undefined,
                status: status || undefined,
                nextKey: nextKey || undefined,
              },
            },
          }),
        )
      ).data,
    [q, status, nextKey],
  );
  const quotes = loaded.data?.quotes;
  return (
    <section>
      <h1>Quotes</h1>
      <p class="muted">
        Saved quotes, newest first. Make one from a bundle’s quote builder with “Save as quote”.
      </p>
      <form
        class="filters"
        aria-label="Find quotes"
        onSubmit={(event) => {
          event.preventDefault();
          navigate(href('/quotes', { q: text.trim(), status }));
        }}
      >
        <div class="field">
          <label for="quote-search">Number or customer</label>
          <input
            id="quote-search"
            type="search"
            value={text}
            onInput={(event) => setText(event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="quote-status">Status</label>
          <select
            id="quote-status"
            value={status}
            onChange={(event) => navigate(href('/quotes', { q, status: event.currentTarget.value }))}
          >
            <option value="">Every status</option>
            {Object.entries(statusLabels).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="secondary">
          Search
        </button>
      </form>
      <ProblemBanner problem={loaded.problem} />
      {quotes === undefined ? (
        loaded.problem === null && <Loading what="quotes" />
      ) : quotes.length === 0 ? (
        <p class="empty">No quote{q || status ? ' matches' : ' yet'}.</p>
      ) : (
        <div class="table-wrap">
          <table class="quotes">
            <caption class="visually-hidden">Quotes</caption>
            <thead>
              <tr>
                <th scope="col">Number</th>
                <th scope="col">Customer</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Total
                </th>
                <th scope="col" class="wide-only">
                  Changed
                </th>
              </tr>
            </thead>
            <tbody>
              {quotes.map((quote) => (
                <tr key={quote.id} data-quote={quote.number}>
                  <th scope="row">
                    <Link to={href(`/quotes/${encodeURIComponent(quote.id)}`)} class="nowrap">
                      {quote.number} v{quote.version}
                    </Link>
                    {quote.title && <div class="small muted">{quote.title}</div>}
                  </th>
                  <td>{quote.customer.name ?? quote.customer.id ?? '—'}</td>
                  <td>
                    <StatusBadge status={quote.status} />
                  </td>
                  <td class="num">{money(quote.total, quote.currency)}</td>
                  <td class="small wide-only">{dateTime(quote.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages">
        {nextKey && <Link to={href('/quotes', { q, status })}>Newest quotes</Link>}
        {loaded.data?.nextKey && (
          <Link to={href('/quotes', { q, status, nextKey: loaded.data.nextKey })} rel="next">
            Older quotes
          </Link>
        )}
      </nav>
    </section>
  );
}

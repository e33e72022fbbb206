import type { Schemas } from '@cpq/client';
import { useState } from 'preact/hooks';
import { dateTime } from '../format.ts';
import { href, Link, navigate, type Place } from '../router.tsx';
import { call, type Session } from '../session.ts';
import { Loading, ProblemBanner, useLoad, usePageTitle } from '../ui.tsx';

type EventType = Schemas['EventType'];

// Keyed by the client's EventType, so the list is checked against the API: a type added there and missing here,
// or one here the API lacks, fails the type check.
const listedTypes: Record<EventType, true> = {
  'bundle.created': true,
  'bundle.updated': true,
  'bundle.deleted': true,
  'bundle.cloned': true,
  'option.created': true,
  'option.updated': true,
  'option.deleted': true,
  'option.cloned': true,
  'option_products.changed': true,
  'price_book.created': true,
  'price_book.updated': true,
  'price_book.deleted': true,
  'prices.changed': true,
  'adjustment.changed': true,
  'product_variants.changed': true,
  'rule.created': true,
  'rule.updated': true,
  'rule.deleted': true,
  'webhook_endpoint.disabled': true,
  'quote.created': true,
  'quote.updated': true,
  'quote.deleted': true,
  'quote.submitted': true,
  'quote.approved': true,
  'quote.rejected': true,
  'quote.finalized': true,
  'quote.accepted': true,
  'quote.declined': true,
  'quote.expired': true,
  'quote.canceled': true,
  'quote.revised': true,
  'approval_policy.created': true,
  'approval_policy.updated': true,
  'approval_policy.deleted': true,
};
const types = Object.keys(listedTypes) as EventType[];

/** What the event is about: the resource's id, or the price book whose prices or adjustments changed. */
function objectId(event: Schemas['Event']): string {
  const object = event.data.object;
  if (typeof object !== 'object' || object === null) return '';
  if ('id' in object) return String(object.id);
  return 'priceBookId' in object ? String(object.priceBookId) : '';
}

/** The console page of what the event changed, while it still exists: a bundle (for its options and rules too), a quote. */
function objectPage(event: Schemas['Event']): string | null {
  const object = event.data.object;
  if (typeof object !== 'object' || object === null || !('id' in object)) return null;
  const id = encodeURIComponent(String(object.id));
  if (event.type.startsWith('quote.')) return event.type === 'quote.deleted' ? null : href(`/quotes/${id}`);
  if (event.type.startsWith('bundle.'))
    return event.type === 'bundle.deleted' ? null : href(`/bundles/${id}`);
  return 'bundleId' in object && typeof object.bundleId === 'string'
    ? href(`/bundles/${encodeURIComponent(object.bundleId)}`)
    : null;
}

function ObjectCell({ event }: { event: Schemas['Event'] }) {
  const to = objectPage(event);
  return <td class="mono small">{to ? <Link to={to}>{objectId(event)}</Link> : objectId(event)}</td>;
}

export function EventsPage({ place, session }: { place: Place; session: Session }) {
  usePageTitle('Events');
  const type = place.query.get('type') ?? '';
  const after = place.query.get('after') ?? '';
  const [open, setOpen] = useState<string | null>(null);
  const loaded = useLoad(
    async () =>
      (
        await call(
          session.api.GET('/v1/events', {
            params: { query: { limit: 50, after: after || undefined, types: type || undefined } },
          }),
        )
      ).data,
    [type, after],
  );
  const events = loaded.data?.events;
  return (
    <section>
      <h1>Events</h1>
      <p class="muted">
        Every write to the catalogue, oldest first, kept for the service’s retention period.
      </p>
      <div class="filters">
        <div class="field">
          <label for="event-type">Type</label>
          <select
            id="event-type"
            value={type}
            onChange={(event) => navigate(href('/events', { type: event.currentTarget.value }))}
          >
            <option value="">Every type</option>
            {types.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ProblemBanner problem={loaded.problem} />
      {events === undefined ? (
        loaded.problem === null && <Loading what="events" />
      ) : events.length === 0 ? (
        <p class="empty">No events{after ? ' after this point' : ''}.</p>
      ) : (
        <div class="table-wrap">
          <table class="events">
            <caption class="visually-hidden">Events</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Type</th>
                <th scope="col">Object</th>
                <th scope="col">Request</th>
                <th scope="col">
                  <span class="visually-hidden">Data</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {events.flatMap((event) => [
                <tr key={event.id}>
                  <td>{dateTime(event.createdAt)}</td>
                  <td>
                    <code>{event.type}</code>
                  </td>
                  <ObjectCell event={event} />
                  <td class="mono small">{event.requestId ?? '—'}</td>
                  <td>
                    <button
                      type="button"
                      class="link"
                      aria-expanded={open === event.id}
                      onClick={() => setOpen(open === event.id ? null : event.id)}
                    >
                      {open === event.id ? 'Hide data' : 'Show data'}
                    </button>
                  </td>
                </tr>,
                open === event.id && (
                  <tr key={`${event.id}-data`} class="detail">
                    <td colSpan={5}>
                      <pre>{JSON.stringify(event.data.object, null, 2)}</pre>
                    </td>
                  </tr>
                ),
              ])}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages">
        {after && <Link to={href('/events', { type })}>Oldest events</Link>}
        {loaded.data?.nextKey && (
          <Link to={href('/events', { type, after: loaded.data.nextKey })} rel="next">
            Later events
          </Link>
        )}
      </nav>
    </section>
  );
}

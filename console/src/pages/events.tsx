import type { Schemas } from '@cpq/client';
import { useState } from 'preact/hooks';
import { dateTime, keyWords } from '../format.ts';
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

type Event = Schemas['Event'];

/** The event's object as a record of fields, or an empty one for anything else. */
function fieldsOf(event: Event): Record<string, unknown> {
  const object = event.data.object;
  return typeof object === 'object' && object !== null ? (object as Record<string, unknown>) : {};
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** "quote.submitted" as words: "Quote submitted". */
export function typeInWords(type: string): string {
  const words = type.replace('.', ' ').replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** What changed, named as a person knows it: a quote's number, a bundle's or option's name, a price book's products. */
function objectLabel(event: Event): string {
  const o = fieldsOf(event);
  const id = text(o.id) ?? '';
  if (o.deleted === true) return id;
  const kind = event.type.split('.')[0];
  if (kind === 'quote') return `Quote ${text(o.number) ?? id}`;
  if (kind === 'bundle') {
    const header = (o.header ?? {}) as { productId?: unknown; properties?: Record<string, unknown> };
    return `Bundle ${text(header.properties?.name) ?? text(header.productId) ?? id}`;
  }
  if (kind === 'prices') {
    const products = Array.isArray(o.productIds) ? o.productIds.map(String) : [];
    const currencies = Array.isArray(o.currencies) ? ` (${o.currencies.join(', ')})` : '';
    // A few products by id (the event carries no names); a bulk change by its count.
    const which = products.length <= 3 ? products.join(', ') : `${products.length} products`;
    return `Prices of ${which}${currencies}`;
  }
  if (kind === 'adjustment') return `Adjustment of ${text(o.productId) ?? ''} in ${text(o.currency) ?? ''}`;
  if (kind === 'product_variants') return `Variants of ${text(o.productId) ?? ''}`;
  if (kind === 'option_products') return 'Products of an option';
  if (kind === 'webhook_endpoint') return `Webhook ${text(o.url) ?? id}`;
  const names: Record<string, string> = {
    option: 'Option',
    rule: 'Rule',
    price_book: 'Price book',
    approval_policy: 'Approval policy',
  };
  return `${names[kind ?? ''] ?? ''} ${text(o.name) ?? id}`.trim();
}

/** The console page of what the event changed, while it still exists: a bundle (for its options and rules too), a quote. */
function objectPage(event: Event): string | null {
  const o = fieldsOf(event);
  const id = text(o.id);
  if (id === null || o.deleted === true) return null;
  if (event.type.startsWith('quote.')) return href(`/quotes/${encodeURIComponent(id)}`);
  if (event.type.startsWith('bundle.')) return href(`/bundles/${encodeURIComponent(id)}`);
  const bundleId = text(o.bundleId);
  return bundleId ? href(`/bundles/${encodeURIComponent(bundleId)}`) : null;
}

/** Who made the change; the command line and the service's own events have no key. */
function keyLabel(event: Event): string {
  return event.keyId ? `by ${keyWords(event.keyName, event.keyId)}` : 'from the command line or the service';
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
            params: {
              query: { limit: 50, order: 'desc', after: after || undefined, types: type || undefined },
            },
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
        Every change to the catalogue and the quotes, newest first, with who made it; kept for the service’s
        retention period.
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
                {typeInWords(t)}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ProblemBanner problem={loaded.problem} />
      {events === undefined ? (
        loaded.problem === null && <Loading what="events" />
      ) : events.length === 0 ? (
        <p class="empty">No events{after ? ' before this point' : ''}.</p>
      ) : (
        <ol class="event-list" aria-label="Events, newest first">
          {events.map((event) => {
            const to = objectPage(event);
            const label = objectLabel(event);
            return (
              <li key={event.id} data-event={event.id} data-type={event.type}>
                <div class="event-what">
                  <span class="badge">{typeInWords(event.type)}</span>{' '}
                  {to ? <Link to={to}>{label}</Link> : <span>{label}</span>}
                </div>
                <div class="event-who small muted">
                  <time class="nowrap" dateTime={event.createdAt}>
                    {dateTime(event.createdAt)}
                  </time>{' '}
                  · <span data-key>{keyLabel(event)}</span>
                </div>
                <button
                  type="button"
                  class="link event-toggle"
                  aria-expanded={open === event.id}
                  onClick={() => setOpen(open === event.id ? null : event.id)}
                >
                  {open === event.id ? 'Hide data' : 'Show data'}
                  <span class="visually-hidden"> of {label}</span>
                </button>
                {open === event.id && (
                  <div class="event-data">
                    <p class="small muted">
                      Event <span class="mono">{event.id}</span>
                      {event.requestId && (
                        <>
                          {' '}
                          · request <span class="mono">{event.requestId}</span>
                        </>
                      )}
                    </p>
                    <pre>{JSON.stringify(event.data.object, null, 2)}</pre>
                  </div>
                )}
              </li>
            );
          })}
        </ol>
      )}
      <nav class="pager" aria-label="Pages">
        {after && <Link to={href('/events', { type })}>Newest events</Link>}
        {loaded.data?.nextKey && (
          <Link to={href('/events', { type, after: loaded.data.nextKey })} rel="next">
            Older events
          </Link>
        )}
      </nav>
    </section>
  );
}

import { type Static, Type } from 'typebox';
import { component } from '../components.ts';
import { Id, Instant, Limit, Nullable, PathId } from '../shared/schemas.ts';

export const eventTypes = [
  'bundle.created',
  'bundle.updated',
  'bundle.deleted',
  'bundle.cloned',
  'option.created',
  'option.updated',
  'option.deleted',
  'option.cloned',
  'option_products.changed',
  'price_book.created',
  'price_book.updated',
  'price_book.deleted',
  'prices.changed',
  'adjustment.changed',
  'product_variants.changed',
  'rule.created',
  'rule.updated',
  'rule.deleted',
  'webhook_endpoint.disabled',
  'quote.created',
  'quote.updated',
  'quote.deleted',
  'quote.submitted',
  'quote.approved',
  'quote.rejected',
  'quote.finalized',
  'quote.accepted',
  'quote.declined',
  'quote.expired',
  'quote.canceled',
  'quote.revised',
  'approval_policy.created',
  'approval_policy.updated',
  'approval_policy.deleted',
] as const;
export type EventType = (typeof eventTypes)[number];

export const EventTypeSchema = component(
  'EventType',
  Type.Unsafe<EventType>(Type.String({ enum: [...eventTypes], description: 'What happened' })),
);

export const Event = component(
  'Event',
  Type.Object(
    {
      id: Id('evt', 'Event id; ids ascend in the order the writes committed'),
      type: EventTypeSchema,
      accountId: Type.String(),
      createdAt: Instant,
      requestId: Nullable(
        Type.String({
          description:
            'x-request-id of the write that made it; null for the command line and for the events the service ' +
            'records by itself (webhook_endpoint.disabled)',
        }),
      ),
      keyId: Nullable(
        Type.String({
          description:
            'The API key whose write made it (key_...); null for the command line, for the service’s own events ' +
            'and for events recorded before keys were kept',
        }),
      ),
      keyName: Nullable(
        Type.String({ description: 'That key’s name when it made the write, if it had one' }),
      ),
      data: Type.Object({
        object: Type.Unknown({
          description:
            'The resource after the write, as its GET answers it; for a delete `{ id, deleted: true }`. ' +
            'option_products.changed: `{ id (option), bundleId, products }`; prices.changed: ' +
            '`{ priceBookId, productIds, currencies }`; adjustment.changed: `{ priceBookId, productId, currency, ' +
            'adjustment }` (null when deleted); product_variants.changed: `{ priceBookId, productId, variants }`; ' +
            'webhook_endpoint.disabled: the endpoint, disabled after 5 days of failed deliveries.',
        }),
      }),
    },
    { description: 'Something that happened to a resource of the account' },
  ),
);
export type Event = Static<typeof Event>;

export const EventListQuery = Type.Object(
  {
    after: Type.Optional(
      Id('evt', 'The last event id already seen; the page starts after it, in the order asked for'),
    ),
    order: Type.Optional(
      Type.Union([Type.Literal('asc'), Type.Literal('desc')], {
        default: 'asc',
        description:
          '`asc` (the default) lists oldest first, to follow the feed: no event committed later sorts before one ' +
          'listed; `desc` newest first, to read what changed lately',
      }),
    ),
    types: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'Comma-separated event types; only these are listed',
      }),
    ),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);
export type EventListQuery = Static<typeof EventListQuery>;

export const EventPage = component(
  'EventPage',
  Type.Object({
    events: Type.Array(Event),
    nextKey: Type.Optional(Id('evt', 'Pass as `after` for the next page; present only when more exist')),
  }),
);

export const EventPath = Type.Object({ eventId: PathId('Event id') });

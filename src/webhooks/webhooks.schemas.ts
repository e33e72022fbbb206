import { type Static, Type } from 'typebox';
import { component } from '../components.ts';
import { eventTypes } from '../events/events.schemas.ts';
import { Id, Instant, Limit, Nullable, PathId, Timestamps } from '../shared/schemas.ts';

export const MAX_ENDPOINTS_PER_ACCOUNT = 100;
/** How long a replaced secret still signs after a rotation. */
export const SECRET_OVERLAP_HOURS = 24;
/** Attempts kept per delivery, the newest; attemptCount counts them all. */
export const ATTEMPTS_KEPT = 50;

const Url = Type.String({
  minLength: 8,
  maxLength: 2048,
  format: 'uri',
  pattern: '^[hH][tT][tT][pP][sS]?://',
  description:
    'Where events are POSTed. https only, and never a loopback, private or link-local address (checked again on ' +
    'every address the name resolves to when each attempt is made), unless the service runs with ' +
    'WEBHOOKS_ALLOW_PRIVATE=true; otherwise 422 destination_not_allowed. No user name or password in it.',
});

const EventTypes = Type.Array(Type.String({ enum: ['*', ...eventTypes] }), {
  minItems: 1,
  maxItems: eventTypes.length,
  uniqueItems: true,
  description: 'The event types sent to the endpoint, or ["*"] for every type (`*` only alone, else 422)',
});

const Description = Type.String({ maxLength: 500 });

export const DisabledReason = Type.Union([Type.Literal('manual'), Type.Literal('failing')], {
  description: 'manual: PATCH isEnabled false; failing: every attempt failed for 5 days straight',
});

const webhookEndpoint = Type.Object({
  id: Id('whe', 'Webhook endpoint id'),
  accountId: Type.String(),
  url: Type.String(),
  eventTypes: Type.Array(Type.String()),
  description: Nullable(Description),
  isEnabled: Type.Boolean({
    description: 'A disabled endpoint is sent nothing; events while it is disabled are never sent to it',
  }),
  disabledReason: Nullable(DisabledReason),
  failingSince: Nullable(
    Type.With(Instant, {
      description: 'When the current run of failed attempts began; null after a success',
    }),
  ),
  previousSecretExpiresAt: Nullable(
    Type.With(Instant, {
      description: 'After a rotation: until then the replaced secret signs too (a second signature)',
    }),
  ),
  ...Timestamps,
});
export const WebhookEndpoint = component('WebhookEndpoint', webhookEndpoint);
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  description:
    'The signing secret (Standard Webhooks: whsec_ and base64 of 32 bytes), shown only in this answer; the ' +
    'service keeps it sealed and cannot show it again',
});

export const WebhookEndpointWithSecret = component(
  'WebhookEndpointWithSecret',
  Type.Object({ ...webhookEndpoint.properties, secret: Secret }),
);
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>;

export const WebhookEndpointCreateBody = component(
  'WebhookEndpointCreateBody',
  Type.Object(
    {
      url: Url,
      eventTypes: EventTypes,
      description: Type.Optional(Nullable(Description)),
    },
    { additionalProperties: false },
  ),
);
export type WebhookEndpointCreateBody = Static<typeof WebhookEndpointCreateBody>;

export const WebhookEndpointPatchBody = component(
  'WebhookEndpointPatchBody',
  Type.Object(
    {
      url: Type.Optional(Url),
      eventTypes: Type.Optional(EventTypes),
      isEnabled: Type.Optional(
        Type.Boolean({
          description:
            'false disables the endpoint; true enables it again, clears failingSince, and sends the events ' +
            'recorded from then on (none of those recorded while it was disabled)',
        }),
      ),
      description: Type.Optional(Nullable(Description)),
    },
    { additionalProperties: false, description: 'Fields left out keep their value' },
  ),
);
export type WebhookEndpointPatchBody = Static<typeof WebhookEndpointPatchBody>;

export const WebhookEndpointList = component(
  'WebhookEndpointList',
  Type.Object({
    webhookEndpoints: Type.Array(WebhookEndpoint, { description: 'In id (creation) order' }),
  }),
);

export const WebhookEndpointPath = Type.Object({ endpointId: PathId('Webhook endpoint id') });

export const DeliveryStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')],
  {
    description:
      'pending: not yet answered with a 2xx, another attempt is coming; delivered: a 2xx came back; failed: ' +
      'no automatic attempt is left (3 days passed), a manual retry may still be made',
  },
);

export const DeliveryAttempt = component(
  'WebhookDeliveryAttempt',
  Type.Object({
    at: Type.With(Instant, { description: 'When the attempt began' }),
    durationMs: Type.Integer({ minimum: 0, description: 'Until the response headers came, or the failure' }),
    responseStatus: Nullable(Type.Integer({ description: 'The HTTP status answered; null when none came' })),
    error: Nullable(
      Type.String({
        description:
          'Why it failed (a non-2xx status, a timeout, a refused connection, a forbidden destination)',
      }),
    ),
  }),
);

export const Delivery = component(
  'WebhookDelivery',
  Type.Object(
    {
      endpointId: Type.String(),
      eventId: Type.String({ description: 'The event sent, which is also the webhook-id header' }),
      eventType: Type.String(),
      status: DeliveryStatus,
      attemptCount: Type.Integer({ minimum: 0 }),
      attempts: Type.Array(DeliveryAttempt, {
        description: `Oldest first; the newest ${ATTEMPTS_KEPT} when there were more`,
      }),
      nextAttemptAt: Nullable(
        Type.With(Instant, { description: 'When the next attempt is due; null when none is coming' }),
      ),
      createdAt: Instant,
      updatedAt: Instant,
    },
    { description: 'One event on its way to one endpoint, with its attempts' },
  ),
);
export type Delivery = Static<typeof Delivery>;

export const DeliveryListQuery = Type.Object(
  {
    status: Type.Optional(DeliveryStatus),
    limit: Type.Optional(Limit),
    nextKey: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'From the previous page' }),
    ),
  },
  { additionalProperties: false },
);
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

export const DeliveryPage = component(
  'WebhookDeliveryPage',
  Type.Object({
    deliveries: Type.Array(Delivery, { description: 'Newest event first' }),
    nextKey: Type.Optional(
      Type.String({ description: 'Pass as nextKey for the next page; present only when more exist' }),
    ),
  }),
);

export const DeliveryPath = Type.Object({
  endpointId: PathId('Webhook endpoint id'),
  eventId: PathId('Event id'),
});

import { Type } from 'typebox';
import { ProblemRef } from '../http/common-schemas.ts';
import { expectedVersions, tagged, taggedWrite } from '../http/conditional.ts';
import type { AnswerSeal } from '../http/idempotency.ts';
import { tag } from '../http/openapi.ts';
import type { Routes } from '../http/routes.ts';
import { open, seal } from './secrets.ts';
import {
  Delivery,
  DeliveryListQuery,
  DeliveryPage,
  DeliveryPath,
  MAX_ENDPOINTS_PER_ACCOUNT,
  SECRET_OVERLAP_HOURS,
  WebhookEndpoint,
  WebhookEndpointCreateBody,
  WebhookEndpointList,
  WebhookEndpointPatchBody,
  WebhookEndpointPath,
  WebhookEndpointWithSecret,
} from './webhooks.schemas.ts';
import {
  createEndpoint,
  deleteEndpoint,
  endpointsDisabledFailing,
  getEndpoint,
  listDeliveries,
  listEndpointsOf,
  MONITORING_COUNT_CAP,
  patchEndpoint,
  pendingDeliveries,
  retryDelivery,
  rotateSecret,
  webhookSettings,
} from './webhooks.service.ts';

const tags = tag(
  'webhooks',
  'Endpoints that receive the account’s events as signed POSTs, and the deliveries made to them',
);

const delivery =
  'Each event of a subscribed type recorded after the endpoint was created (or enabled again) is POSTed to its ' +
  'URL, signed per Standard Webhooks: headers webhook-id (the event id), webhook-timestamp (Unix seconds) and ' +
  'webhook-signature (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the secret, space-separated when a ' +
  'rotation leaves two), the body being the event as GET /v1/events/{eventId} answers it. A 2xx within ' +
  'WEBHOOKS_TIMEOUT_MS (10 s) delivers it; otherwise it is tried again after about 5 s, 5 min, 30 min, 2 h, 5 h, ' +
  '10 h and then every 10 h, each wait drawn within 20% either side, for 3 days. An endpoint whose attempts all ' +
  'failed for 5 days is disabled, recording a webhook_endpoint.disabled event. At least once, in no set order: ' +
  'receivers deduplicate by webhook-id.';

const secretOnce =
  'The answer is the only place the secret is ever shown. With an Idempotency-Key, the answer kept for a ' +
  'replay is sealed like the secret itself (WEBHOOKS_SECRET_KEY).';

export const webhooksRoutes: Routes = async (app, { db, config, metrics }) => {
  const settings = webhookSettings(config);
  // Figures of the database, the same in every process that reads it. A database that does not answer shows NaN
  // rather than failing the whole scrape, when the other figures matter most.
  const orNaN = (read: () => Promise<number>) => () => read().catch(() => Number.NaN);
  metrics.watchGauge(
    'cpq_webhook_deliveries_pending',
    `Webhook deliveries to enabled endpoints still waiting for a 2xx (counted up to ${MONITORING_COUNT_CAP})`,
    orNaN(() => pendingDeliveries(db)),
  );
  metrics.watchGauge(
    'cpq_webhook_endpoints_disabled_failing',
    `Webhook endpoints disabled because every attempt failed for 5 days (counted up to ${MONITORING_COUNT_CAP})`,
    orNaN(() => endpointsDisabledFailing(db)),
  );
  const sealAnswer: AnswerSeal = {
    seal: (text, owner) => seal(text, settings.secretKey, owner),
    open: (text, owner) => open(text, settings.secretKey, owner),
  };

  app.post(
    '/webhook-endpoints',
    {
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Subscribe a URL to the account’s events; the answer carries the signing secret, once',
        description: `${delivery} ${secretOnce} An account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} endpoints (422).`,
        tags,
        body: WebhookEndpointCreateBody,
        response: {
          201: Type.With(WebhookEndpointWithSecret, {
            description: 'The endpoint created, with its signing secret (shown only here)',
          }),
          422: ProblemRef,
        },
      },
      config: { sealAnswer },
    },
    async (request, reply) => {
      const made = await createEndpoint(request.scope, { settings, body: request.body });
      const endpoint = tagged(reply, made.value.id, made);
      return reply.code(201).header('location', `/v1/webhook-endpoints/${endpoint.id}`).send(endpoint);
    },
  );

  app.get(
    '/webhook-endpoints',
    {
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'List the account’s webhook endpoints (never their secrets)',
        tags,
        response: {
          200: Type.With(WebhookEndpointList, { description: 'The account’s webhook endpoints' }),
        },
      },
    },
    async (request) => listEndpointsOf(request.scope),
  );

  app.get(
    '/webhook-endpoints/:endpointId',
    {
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Read a webhook endpoint (never its secret)',
        tags,
        params: WebhookEndpointPath,
        response: { 200: Type.With(WebhookEndpoint, { description: 'The webhook endpoint' }) },
      },
    },
    async (request, reply) => {
      const { endpointId } = request.params;
      return tagged(reply, endpointId, await getEndpoint(request.scope, endpointId));
    },
  );

  app.patch(
    '/webhook-endpoints/:endpointId',
    {
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Change a webhook endpoint’s URL, event types or description, or disable or enable it',
        description:
          'A new URL or event types apply to the next attempt and to events recorded from then on. Deliveries ' +
          'of a disabled endpoint wait; enabled again, it resumes them and sends the events recorded from then on.',
        tags,
        params: WebhookEndpointPath,
        body: WebhookEndpointPatchBody,
        response: {
          200: Type.With(WebhookEndpoint, { description: 'The webhook endpoint as changed' }),
          422: ProblemRef,
        },
      },
    },
    async (request, reply) => {
      const { endpointId } = request.params;
      return taggedWrite(request, reply, endpointId, (expected) =>
        patchEndpoint(request.scope, { settings, id: endpointId, body: request.body, expected }),
      );
    },
  );

  app.delete(
    '/webhook-endpoints/:endpointId',
    {
      config: { etag: false },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint and its deliveries',
        description: 'An attempt already under way may still reach the receiver.',
        tags,
        params: WebhookEndpointPath,
        response: { 204: Type.Null({ description: 'Deleted; no body' }) },
      },
    },
    async (request, reply) => {
      const { endpointId } = request.params;
      await deleteEndpoint(request.scope, {
        id: endpointId,
        expected: expectedVersions(request, endpointId),
      });
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhook-endpoints/:endpointId/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Replace the signing secret; the old one still signs for 24 hours',
        description:
          `Answers the endpoint with its new secret. For ${SECRET_OVERLAP_HOURS} hours (previousSecretExpiresAt) ` +
          'every delivery carries two signatures, one under each secret, so a receiver verifies with either while ' +
          `it switches; a second rotation within that time drops the oldest. ${secretOnce}`,
        tags,
        params: WebhookEndpointPath,
        response: {
          200: Type.With(WebhookEndpointWithSecret, {
            description: 'The endpoint with its new signing secret (shown only here)',
          }),
        },
      },
      config: { sealAnswer },
    },
    async (request, reply) => {
      const { endpointId } = request.params;
      return tagged(reply, endpointId, await rotateSecret(request.scope, { settings, id: endpointId }));
    },
  );

  app.get(
    '/webhook-endpoints/:endpointId/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'List an endpoint’s deliveries with every attempt, newest event first',
        description:
          'Keyset pages: pass the nextKey of a page to read the next. `status` keeps only deliveries in that ' +
          'state. A delivery is kept as long as its event (EVENTS_RETENTION_DAYS).',
        tags,
        params: WebhookEndpointPath,
        querystring: DeliveryListQuery,
        response: {
          200: Type.With(DeliveryPage, {
            description: 'A page of the endpoint’s deliveries, newest event first',
          }),
        },
      },
    },
    async (request) =>
      listDeliveries(request.scope, { endpointId: request.params.endpointId, query: request.query }),
  );

  app.post(
    '/webhook-endpoints/:endpointId/deliveries/:eventId/retry',
    {
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Attempt a delivery again now, whatever its state',
        description:
          'The delivery becomes pending and due at once (a delivered one is sent again). After its 3 days, a ' +
          'failed delivery gets this one attempt. 422 endpoint_disabled when the endpoint is disabled.',
        tags,
        params: DeliveryPath,
        response: {
          202: Type.With(Delivery, { description: 'The delivery, pending and due at once' }),
          422: ProblemRef,
        },
      },
      // A delivery is not a resource with a version of its own: nothing to tag.
      config: { etag: false },
    },
    async (request, reply) => {
      const { endpointId, eventId } = request.params;
      return reply.code(202).send(await retryDelivery(request.scope, { endpointId, eventId }));
    },
  );
};

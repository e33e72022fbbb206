import { Type } from 'typebox';
import { tag } from '../http/openapi.ts';
import type { Routes } from '../http/routes.ts';
import { Event, EventListQuery, EventPage, EventPath } from './events.schemas.ts';
import { getEvent, listEvents } from './events.service.ts';

const tags = tag(
  'events',
  'What every write changed, recorded in its transaction, to read in the order the writes committed',
);

export const eventsRoutes: Routes = async (app, { config }) => {
  app.get(
    '/events',
    {
      schema: {
        operationId: 'listEvents',
        summary: 'List the account’s events, oldest first, or newest first with order=desc',
        description:
          'Every successful write records its events in its own transaction: a write that fails records none. ' +
          'quote.expired is recorded, once per quote, by a sweep every instance runs every 30 s: an open quote reads ' +
          'as expired from its expiresAt on, and its event follows within that time. ' +
          'Ids ascend in the order the writes committed, so a consumer that passes the last id it has seen as ' +
          '`after` never misses one. `order=desc` lists newest first instead (`after` then pages back in time). ' +
          '`types` keeps only the listed types (an unknown one is a 400). Events are ' +
          `kept ${config.eventsRetentionDays} days (EVENTS_RETENTION_DAYS), then purged.`,
        tags,
        querystring: EventListQuery,
        response: { 200: Type.With(EventPage, { description: 'A page of events, in the order asked for' }) },
      },
    },
    async (request) => listEvents(request.scope, request.query),
  );

  app.get(
    '/events/:eventId',
    {
      schema: {
        operationId: 'getEvent',
        description:
          "One event of the account's feed, as GET /v1/events lists it, while it is kept (EVENTS_RETENTION_DAYS).",
        summary: 'Read one event',
        tags,
        params: EventPath,
        response: { 200: Type.With(Event, { description: 'The event' }) },
      },
    },
    async (request) => getEvent(request.scope, request.params.eventId),
  );
};

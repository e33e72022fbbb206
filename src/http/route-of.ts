import type { FastifyInstance, FastifyRequest } from 'fastify';

type RouteOptions = FastifyRequest['routeOptions'];

declare module 'fastify' {
  interface FastifyRequest {
    /** The route's options as first read by routeOf. */
    readRouteOptions: FastifyRequest['routeOptions'] | null;
  }
}

/** Makes room on every request for what routeOf reads. */
export function keepRouteOptions(app: FastifyInstance): void {
  app.decorateRequest('readRouteOptions', null);
}

/**
 * The options of the route serving `request`. Fastify's `request.routeOptions` builds a new object of a dozen
 * fields on every read, and the hooks of one request read it five times or more: read once, it is one object.
 */
export function routeOf(request: FastifyRequest): RouteOptions {
  request.readRouteOptions ??= request.routeOptions;
  return request.readRouteOptions;
}

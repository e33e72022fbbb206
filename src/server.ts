import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { type App, buildApp } from './app.ts';
import type { Config } from './config.ts';
import { openDatabase, prepareStore, startFailure } from './db/store.ts';
import { scheduleEventPurge } from './events/events.service.ts';
import { collectWhenIdle, settleHeap } from './heap.ts';
import { scheduleQuoteExpiry } from './quotes/quote-expiry.ts';
import { sealStoredSecrets, webhookSettings } from './webhooks/webhooks.service.ts';
import { webhookWorker } from './webhooks/webhooks.worker.ts';

/** Under `cpq serve --workers N`, one of the N processes: the primary tells it when to stop. */
export interface WorkerRole {
  onStopRequest(stop: (reason: string) => void): void;
  stopped(): void;
}

/** Starts the service and stops it cleanly on SIGTERM or SIGINT: no new connections, in-flight requests finish
 * within the grace period, then the database closes. */
export async function serve(config: Config, worker?: WorkerRole): Promise<void> {
  let app: App | undefined;
  const database = openDatabase(config, (error) => app?.log.warn({ err: error }, 'database connection lost'));
  const started = await buildApp({ config, database });
  app = started;
  const webhooks = webhookSettings(config);
  if (webhooks.secretKey === null) {
    started.log.info('WEBHOOKS_SECRET_KEY is unset: webhook signing secrets are stored unsealed');
  }
  let address: string;
  let unstarted: Set<Socket>;

  try {
    await prepareStore(database, (migration) => started.log.info({ migration }, 'migration applied'));
    const sealed = await sealStoredSecrets(database.db, webhooks);
    if (sealed > 0)
      started.log.info({ endpoints: sealed }, 'webhook secrets sealed with WEBHOOKS_SECRET_KEY');
    await started.ready();
    settleHeap();
    // Past the cap Node closes a new connection as soon as it accepts it, before it can cost anything more.
    started.server.maxConnections = config.maxConnections;
    address = await started.listen({ port: config.port, host: config.host });
    unstarted = connectionsWithoutRequest(started.server);
    // Out of descriptors, libuv drops what it cannot accept; when even that fails, Node reports EMFILE as the
    // server's error, which with no listener would end the process.
    started.server.on('error', (error) => started.log.warn({ err: error }, 'accepting a connection failed'));
  } catch (error) {
    // Nothing may keep the process alive after a failed start (an open pool would, for its idle timeout).
    await started.close();
    await database.db.destroy();
    throw startFailure(database.description, error);
  }

  const stopPurge = scheduleEventPurge(database.db, config.eventsRetentionDays, (error) =>
    started.log.warn({ err: error }, 'purging expired events failed'),
  );
  const stopExpiry = scheduleQuoteExpiry(database.db, (error) =>
    started.log.warn({ err: error }, 'recording expired quotes failed'),
  );
  // Under --workers each process runs its own delivery worker: they share the work through the database's claims.
  const deliveries = webhookWorker({
    db: database.db,
    settings: webhooks,
    concurrency: config.webhooksConcurrency,
    endpointConcurrency: config.webhooksEndpointConcurrency,
    timeoutMs: config.webhooksTimeoutMs,
    log: started.log,
    onAttempt: started.metrics.webhookAttempt,
  });
  deliveries.start();
  const idleCollector = collectWhenIdle({
    intervalMs: config.idleCollectMs,
    onCollect: ({ rssBefore, rssAfter, pauseMs }) =>
      started.log.debug(
        { rssBeforeMb: megabytes(rssBefore), rssAfterMb: megabytes(rssAfter), pauseMs: Math.round(pauseMs) },
        'idle: heap memory given back',
      ),
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    idleCollector.stop();
    started.log.info({ signal }, 'shutting down: finishing requests in flight');
    // Node's closeIdleConnections leaves a connection that has sent no request open (a browser's preconnect):
    // with no request to finish, it is closed now rather than holding the stop for the whole grace period.
    for (const socket of unstarted) socket.destroy();
    // Idle connections close at once (Fastify's forceCloseConnections). A client that stalls mid-request, or a
    // request that runs long, keeps its connection only for the grace period; then every connection is cut and
    // the stop completes as usual.
    const grace = setTimeout(() => {
      started.log.warn(
        { graceMs: config.shutdownGraceMs },
        'shutdown grace period over: closing every connection',
      );
      started.server.closeAllConnections();
    }, config.shutdownGraceMs);
    grace.unref();
    // Only a stop that hangs after the connections are gone (a database that never answers) ends here.
    const forced = setTimeout(() => {
      started.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 15_000);
    forced.unref();
    // The delivery worker stops claiming at once; its attempts in flight get the same grace as requests.
    await Promise.all([started.close(), deliveries.stop(config.shutdownGraceMs)]);
    clearTimeout(grace);
    await stopPurge();
    await stopExpiry();
    await database.db.destroy();
    started.log.info('stopped');
    worker?.stopped();
  };
  // `once`: a second signal gets the default action, so an operator can still force an exit.
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  worker?.onStopRequest((reason) => void stop(reason));

  const ready = { address, database: database.dialect, at: database.description };
  started.log.info(ready, worker ? 'worker is ready' : 'cpq is ready');
}

/** The server's connections that have not yet sent a whole request's headers, kept current as they come and go. */
function connectionsWithoutRequest(server: Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (request: { socket: Socket }) => sockets.delete(request.socket));
  return sockets;
}

function megabytes(bytes: number): number {
  return Math.round(bytes / 2 ** 20);
}

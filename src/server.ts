import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import { connect } from './db/connect.ts';
import { migrateToLatest } from './db/migrate.ts';

/** Starts the service and stops it cleanly on SIGTERM or SIGINT: no new connections, in-flight requests finish,
 * then the database closes. */
export async function serve(config: Config): Promise<void> {
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  const database = connect({
    databaseUrl: config.databaseUrl,
    sqlitePath: config.sqlitePath,
    onPoolError: (error) => app?.log.warn({ err: error }, 'database connection lost'),
  });
  await migrateToLatest(database.db, (name) => console.error(`migrated: ${name}`));
  app = await buildApp({ config, database });
  const started = app;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    started.log.info({ signal }, 'shutting down');
    const forced = setTimeout(() => {
      started.log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 25_000);
    forced.unref();
    await started.close();
    await database.db.destroy();
    started.log.info('stopped');
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  await started.listen({ port: config.port, host: config.host });
  started.log.info({ database: database.dialect, at: database.description }, 'cpq is ready');
}

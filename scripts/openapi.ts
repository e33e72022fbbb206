// The app's OpenAPI document, built without a server: the app on an in-memory SQLite database, with the default
// configuration (so the limits the document states do not depend on the environment), asked for its document.
// `node scripts/openapi.ts <file>` writes it to the file.
import { writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { connect } from '../src/db/connect.ts';

export async function openApiDocument(): Promise<object> {
  const database = connect({ databaseUrl: null, sqlitePath: ':memory:' });
  const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent' }), database });
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
    await database.db.destroy();
  }
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node scripts/openapi.ts <file>');
    process.exit(2);
  }
  writeFileSync(file, `${JSON.stringify(await openApiDocument(), null, 2)}\n`);
}

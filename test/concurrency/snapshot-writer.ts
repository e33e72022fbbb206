// The writer of snapshot-reads.test.ts, run in a worker thread: an instance with its own connection whose writes
// commit truly in parallel with the readers' statements (in one thread, a read's statements never interleave with
// another connection's commit on SQLite). It posts each product whose price write was acknowledged, and stops
// when told.
import { parentPort, workerData } from 'node:worker_threads';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { connect } from '../../src/db/connect.ts';

export interface WriterData {
  databaseUrl: string | null;
  sqlitePath: string;
  key: string;
  bundleId: string;
  optionId: string;
  priceBookId: string;
}

/** One write of FLIP: its list price, its override and its flag, all from n. */
export function flip(n: number) {
  return [
    {
      productId: 'FLIP',
      currency: 'USD',
      listPrice: n,
      standardPrice: n,
      adjustment: { type: 'override', amount: n },
      allowUnitPriceEditing: n % 2 === 0,
    },
  ];
}

if (parentPort !== null) {
  const port = parentPort;
  const data = workerData as WriterData;
  const handle = connect({ databaseUrl: data.databaseUrl, sqlitePath: data.sqlitePath });
  const app = await buildApp({
    config: loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0' }),
    database: handle,
  });
  let stopped = false;
  port.on('message', () => {
    stopped = true;
  });
  const failures: string[] = [];
  const send = async (method: 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => {
    const response = await app.inject({
      method,
      url,
      headers: { 'x-api-key': data.key, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    if (response.statusCode >= 300)
      failures.push(`${method} ${url}: ${response.statusCode} ${response.body}`);
  };
  const book = `/v1/pricebooks/${data.priceBookId}`;
  const option = `/v1/bundles/${data.bundleId}/options/${data.optionId}`;
  const flipper = async () => {
    for (let n = 2; !stopped; n++) await send('PUT', `${book}/prices`, flip(n));
  };
  // Each product is added, then priced, then deleted with its price in one request: once its price is
  // acknowledged, it is priced in every committed state until it is gone.
  const cycler = async () => {
    let previous: string | null = null;
    for (let k = 0; !stopped; k++) {
      const productId = `X-${k}`;
      await send('POST', `${option}/products`, [{ productId }]);
      await send('PUT', `${book}/prices`, [{ productId, currency: 'USD', standardPrice: 1 }]);
      port.postMessage({ priced: productId });
      if (previous !== null) await send('DELETE', `${option}/${previous}`);
      previous = productId;
    }
  };
  await Promise.all([flipper(), cycler()]);
  await app.close();
  await handle.db.destroy();
  port.postMessage({ failures });
}

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from '../../src/db/connect.ts';
import { pendingDeliveries } from '../../src/webhooks/webhooks.service.ts';
import { describeEachDatabase } from '../helpers/app.ts';
import { ok, privateApp, startReceiver, testWorker, write } from './support.ts';

const events = 60;

// Two instances on one database, each with its own connection and worker, as two processes would run them.
describeEachDatabase('two instances share the deliveries', (ctx) => {
  test('every event reaches every endpoint once: none lost, none sent twice, both instances working', async () => {
    const key = await ctx.newKey('hooks-shared');
    const receivers = [await startReceiver(() => sleep(5).then(() => 200)), await startReceiver()];
    const hooks = await privateApp(ctx);
    const handles = [0, 1].map(() =>
      connect({ databaseUrl: ctx.database.databaseUrl, sqlitePath: ctx.database.sqlitePath }),
    );
    try {
      for (const receiver of receivers) {
        ok(
          await hooks.call('POST', '/v1/webhook-endpoints', {
            key,
            body: { url: receiver.url, eventTypes: ['bundle.created'] },
          }),
          201,
        );
      }
      const made: string[] = [];
      for (let i = 0; i < events; i++) made.push((await write(ctx, `SHARED-${i}`, key)).id);
      const workers = handles.map((handle) => testWorker(handle.db, { endpointConcurrency: 2 }));
      const attempts = [0, 0];
      for (let round = 0; round < 200; round++) {
        const started = await Promise.all(workers.map((worker) => worker.runOnce()));
        started.forEach((n, i) => {
          attempts[i] = (attempts[i] as number) + n;
        });
        if (started.every((n) => n === 0) && (await pendingDeliveries(ctx.db)) === 0) break;
      }
      for (const receiver of receivers) {
        const objects = receiver.received.map((r) => r.event.data.object.id as string);
        assert.deepEqual([...new Set(objects)].sort(), [...made].sort(), 'none lost');
        assert.equal(receiver.received.length, events, 'none sent twice');
      }
      assert.equal((attempts[0] as number) + (attempts[1] as number), 2 * events);
      assert.ok(
        attempts.every((n) => n > 0),
        `both instances worked: ${attempts}`,
      );
    } finally {
      await hooks.close();
      for (const handle of handles) await handle.db.destroy();
      for (const receiver of receivers) await receiver.close();
    }
  });
});

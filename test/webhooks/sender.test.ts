import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { send } from '../../src/webhooks/sender.ts';
import { startReceiver } from './support.ts';

const attempt = (url: string, timeoutMs: number, signal: AbortSignal) =>
  send({
    url,
    body: JSON.stringify({ type: 'test' }),
    headers: { 'content-type': 'application/json' },
    timeoutMs,
    allowPrivate: true,
    signal,
  });

test('an attempt lets go of the shutdown signal and its timer when it ends, answered or timed out', async () => {
  const receiver = await startReceiver((n) => (n === 0 ? 204 : 'hang'));
  const shutdown = new AbortController();
  const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
  try {
    const before = timers();
    const answered = await attempt(receiver.url, 10_000, shutdown.signal);
    assert.deepEqual({ ...answered, durationMs: 0 }, { responseStatus: 204, durationMs: 0, error: null });
    assert.equal(
      getEventListeners(shutdown.signal, 'abort').length,
      0,
      'no listener left on the shutdown signal',
    );
    assert.equal(timers(), before, 'no timer left for the 10 s the attempt could have taken');

    const hung = await attempt(receiver.url, 200, shutdown.signal);
    assert.equal(hung.responseStatus, null);
    assert.equal(hung.error, 'no answer within 200 ms');
    assert.ok(hung.durationMs >= 190, `${hung.durationMs} ms`);
    assert.equal(getEventListeners(shutdown.signal, 'abort').length, 0);
  } finally {
    await receiver.close();
  }
});

test('shutdown cuts an attempt under way: it throws, and counts as not made', async () => {
  const receiver = await startReceiver(() => 'hang');
  const shutdown = new AbortController();
  try {
    const cut = attempt(receiver.url, 10_000, shutdown.signal);
    await receiver.waitFor(1);
    shutdown.abort(new Error('shutting down'));
    await assert.rejects(cut, /shutting down/);
    const already = attempt(receiver.url, 10_000, shutdown.signal);
    await assert.rejects(already, /shutting down/);
  } finally {
    await receiver.close();
  }
});

import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { send } from '../../src/webhooks/sender.ts';
import { hostileReceiver, startReceiver, until } from './support.ts';

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

test('an endless answer: the attempt reads at most 64 KB of it, then lets the connection go', async () => {
  const receiver = await hostileReceiver('endless');
  try {
    const started = performance.now();
    const outcome = await attempt(receiver.url, 2000, new AbortController().signal);
    assert.ok(performance.now() - started < 2000, 'within the attempt’s time');
    assert.equal(outcome.responseStatus, 200);
    assert.equal(outcome.error, null, 'the status decides the outcome');
    await until(async () => receiver.open() === 0, 1000);
    const written = receiver.written();
    // What the receiver wrote beyond what was read sits in the sockets' buffers: a few megabytes at most.
    await sleep(500);
    assert.equal(receiver.written(), written, 'nothing more was taken');
    assert.ok(written < 16 * 2 ** 20, `${written} bytes written`);
  } finally {
    await receiver.close();
  }
});

test('a drip-fed answer: the attempt, body included, ends within its time and lets the connection go', async () => {
  const receiver = await hostileReceiver('drip');
  try {
    const started = performance.now();
    const outcome = await attempt(receiver.url, 1000, new AbortController().signal);
    const took = performance.now() - started;
    assert.equal(outcome.responseStatus, 200);
    assert.ok(took >= 900 && took < 1500, `the body was read for the attempt's time, no longer: ${took} ms`);
    await until(async () => receiver.open() === 0, 500);
  } finally {
    await receiver.close();
  }
});

import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { awaitEventWriters, type EventRow, eventIdsAfter, findEvents } from '../events/events.repository.ts';
import { toEvent } from '../events/events.service.ts';
import { recordEvent } from '../events/outbox.ts';
import { scopeOutsideHttp } from '../shared/scope.ts';
import type { Resolve } from './destinations.ts';
import { open, signatureHeader, UnreadableSecretError } from './secrets.ts';
import { type AttemptOutcome, send } from './sender.ts';
import {
  claimDeliveries,
  type DeliveryRow,
  type EndpointRow,
  endpointsWithWork,
  finishAttempt,
  insertDeliveries,
  lockEndpoint,
  lockEndpointForFanOut,
  releaseLease,
  updateEndpoint,
} from './webhooks.repository.ts';
import { ATTEMPTS_KEPT } from './webhooks.schemas.ts';
import { subscribedTypes, toEndpoint, type WebhookSettings } from './webhooks.service.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The wait after the nth failed attempt (the last repeats), each drawn within 20% either side. */
export const RETRY_DELAYS_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR];
/** A delivery gets automatic attempts for this long after its event was fanned out; then it fails. */
export const GIVE_UP_AFTER_MS = 3 * DAY;
/** An endpoint whose attempts have all failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * DAY;
/** Events one fan-out transaction reads past an endpoint's cursor. */
const FAN_OUT_BATCH = 500;

export function retryDelay(failedAttempts: number, random: () => number): number {
  const base = RETRY_DELAYS_MS[Math.min(failedAttempts, RETRY_DELAYS_MS.length) - 1] as number;
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** A delivery after an attempt: delivered, to be tried again, or given up. */
export type AttemptResult = 'delivered' | 'retrying' | 'failed';

export interface WorkerLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface WorkerOptions {
  db: Db;
  settings: WebhookSettings;
  /** Attempts in flight at once in this process, in all and to one endpoint. */
  concurrency: number;
  endpointConcurrency: number;
  /** How long a receiver has to answer. */
  timeoutMs: number;
  log: WorkerLog;
  /** The time every schedule is read and written in (ms); tests pass a fake one. */
  clock?: () => number;
  random?: () => number;
  /** How often an idle worker looks for work. */
  pollIntervalMs?: number;
  /** Told of each attempt recorded: what became of its delivery (for the metrics). */
  onAttempt?: (outcome: AttemptResult) => void;
  /** How long a claim holds; past it, another worker may take the delivery over. */
  leaseMs?: number;
  /** The name lookup of destinations; the system's unless a test stands in for DNS. */
  resolve?: Resolve;
}

export interface WebhookWorker {
  /** Runs passes until stop. */
  start(): void;
  /** One pass (fan-out and claims), then waits for the attempts it started; answers how many it started. */
  runOnce(): Promise<number>;
  /** Stops claiming; attempts in flight may finish for graceMs, then are cut and their deliveries released. */
  stop(graceMs: number): Promise<void>;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Gives back one place counted under `key`. */
function release(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left === 0) counts.delete(key);
  else counts.set(key, left);
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * The delivery worker: each pass fans the events past every enabled endpoint's cursor into deliveries and claims due
 * ones, at most `concurrency` attempts in flight and `endpointConcurrency` to one endpoint, so a slow or dead receiver
 * holds only its own few places. Attempts run outside any transaction; each is recorded in one.
 */
export function webhookWorker(options: WorkerOptions): WebhookWorker {
  const { db, settings, log } = options;
  const clock = options.clock ?? Date.now;
  const random = options.random ?? Math.random;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const leaseMs = options.leaseMs ?? options.timeoutMs + 5 * SECOND;
  const inFlight = new Set<Promise<void>>();
  const perEndpoint = new Map<string, number>();
  const perAccount = new Map<string, number>();
  // Places no one account may take while alone: an attempt to a receiver that never answers holds its place for
  // the whole timeout, so without them another account's first delivery would wait that long.
  const accountAlone = Math.max(1, options.concurrency - Math.ceil(options.concurrency / 4));
  const shutdown = new AbortController();
  let stopping = false;
  let wake: (() => void) | null = null;
  let waitingForPlace = false;
  let loop: Promise<void> = Promise.resolve();

  /** Moves the endpoint's cursor over the next batch of its account's events, making their deliveries. */
  async function fanOut(endpoint: EndpointRow): Promise<{ made: number; full: boolean }> {
    return db.transaction().execute(async (tx) => {
      const row = await lockEndpointForFanOut(tx, endpoint.account_id, endpoint.id);
      if (!row) return { made: 0, full: false };
      await awaitEventWriters(tx, row.account_id);
      const ids = await eventIdsAfter(tx, row.account_id, row.last_event_id, FAN_OUT_BATCH);
      const upto = ids.at(-1);
      if (upto === undefined) return { made: 0, full: false };
      const now = clock();
      const made = await insertDeliveries(
        tx,
        { accountId: row.account_id, id: row.id, types: subscribedTypes(row) },
        { afterId: row.last_event_id, uptoId: upto },
        { now: iso(now), giveUpAt: iso(now + GIVE_UP_AFTER_MS) },
      );
      await updateEndpoint(tx, row.account_id, row.id, { last_event_id: upto });
      return { made, full: ids.length === FAN_OUT_BATCH };
    });
  }

  function signingSecrets(endpoint: EndpointRow, now: number): string[] {
    const owner = { accountId: endpoint.account_id, id: endpoint.id };
    const secrets = [open(endpoint.secret, settings.secretKey, owner)];
    const previous = endpoint.previous_secret;
    if (previous !== null && (endpoint.previous_secret_expires_at ?? '') > iso(now)) {
      secrets.push(open(previous, settings.secretKey, owner));
    }
    return secrets;
  }

  /** Writes the attempt and what follows from it: the delivery's next state, the endpoint's failure run. */
  async function record(
    from: EndpointRow,
    delivery: DeliveryRow,
    token: string,
    at: number,
    outcome: AttemptOutcome,
  ): Promise<AttemptResult | null> {
    const accountId = delivery.account_id;
    return db.transaction().execute(async (tx) => {
      // A success that leaves the endpoint as it was (the common case) writes the delivery alone. Any other outcome
      // may change the endpoint, so it is locked first, then the delivery: the order an endpoint's delete takes.
      const quiet = outcome.error === null && from.failing_since === null;
      const endpoint = quiet ? from : await lockEndpoint(tx, accountId, from.id);
      if (!endpoint) return null;
      const now = clock();
      const attempts = [
        ...JSON.parse(delivery.attempts),
        {
          at: iso(at),
          durationMs: outcome.durationMs,
          responseStatus: outcome.responseStatus,
          error: outcome.error,
        },
      ].slice(-ATTEMPTS_KEPT);
      const count = delivery.attempt_count + 1;
      const failed = outcome.error !== null;
      const next = failed ? iso(now + retryDelay(count, random)) : null;
      const giveUp = next !== null && next > delivery.give_up_at;
      const result: AttemptResult = !failed ? 'delivered' : giveUp ? 'failed' : 'retrying';
      const mine = await finishAttempt(
        tx,
        { accountId, endpointId: endpoint.id, eventId: delivery.event_id },
        token,
        {
          status: result === 'retrying' ? 'pending' : result,
          attempts: JSON.stringify(attempts),
          attempt_count: count,
          next_attempt_at: giveUp ? null : next,
          updated_at: iso(now),
        },
      );
      // A lease that lapsed: another worker took the delivery over, and its attempt counts.
      if (!mine) return null;
      const changed = { version: endpoint.version + 1, updated_at: iso(now) };
      if (!failed) {
        if (endpoint.failing_since !== null) {
          await updateEndpoint(tx, accountId, endpoint.id, { ...changed, failing_since: null });
        }
      } else if (endpoint.failing_since === null) {
        await updateEndpoint(tx, accountId, endpoint.id, { ...changed, failing_since: iso(at) });
      } else if (endpoint.is_enabled && now - Date.parse(endpoint.failing_since) >= DISABLE_AFTER_MS) {
        const disabled = await updateEndpoint(tx, accountId, endpoint.id, {
          ...changed,
          is_enabled: false,
          disabled_reason: 'failing',
        });
        if (disabled) {
          await recordEvent(
            scopeOutsideHttp(db, accountId),
            tx,
            'webhook_endpoint.disabled',
            toEndpoint(disabled),
          );
          log.warn(
            { accountId, endpointId: endpoint.id, failingSince: endpoint.failing_since },
            'webhook endpoint disabled: every attempt failed for 5 days',
          );
        }
      }
      return result;
    });
  }

  async function attempt(endpoint: EndpointRow, delivery: DeliveryRow, event: EventRow, token: string) {
    const at = clock();
    let outcome: AttemptOutcome;
    try {
      const body = JSON.stringify(toEvent(event));
      // Wall time, whatever the clock: the receiver checks it against its own.
      const timestamp = Math.floor(Date.now() / 1000);
      outcome = await send({
        url: endpoint.url,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'cpq-webhooks',
          'webhook-id': event.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(signingSecrets(endpoint, at), event.id, timestamp, body),
        },
        timeoutMs: options.timeoutMs,
        allowPrivate: settings.allowPrivate,
        signal: shutdown.signal,
        resolve: options.resolve,
      });
    } catch (error) {
      if (!(error instanceof UnreadableSecretError)) {
        // Cut by shutdown: not an attempt, and the delivery is free for the next worker at once.
        await releaseLease(
          db,
          { accountId: delivery.account_id, endpointId: endpoint.id, eventId: delivery.event_id },
          token,
        );
        return;
      }
      outcome = { responseStatus: null, durationMs: 0, error: error.message };
    }
    const result = await record(endpoint, delivery, token, at, outcome);
    if (result !== null) options.onAttempt?.(result);
  }

  function launch(endpoint: EndpointRow, delivery: DeliveryRow, event: EventRow | undefined, token: string) {
    // An event purged meanwhile took its delivery with it.
    if (!event) return;
    const place = `${endpoint.account_id}/${endpoint.id}`;
    perEndpoint.set(place, (perEndpoint.get(place) ?? 0) + 1);
    perAccount.set(endpoint.account_id, (perAccount.get(endpoint.account_id) ?? 0) + 1);
    const running: Promise<void> = attempt(endpoint, delivery, event, token)
      .catch((error: unknown) => {
        // The database failed: the lease lapses and the delivery is tried again.
        log.warn({ err: error, endpointId: endpoint.id, eventId: event.id }, 'webhook attempt not recorded');
      })
      .finally(() => {
        inFlight.delete(running);
        release(perEndpoint, place);
        release(perAccount, endpoint.account_id);
        if (waitingForPlace) wake?.();
      });
    inFlight.add(running);
  }

  /** One pass; answers how many attempts it started and whether more work is ready now or when a place frees. */
  async function pass(): Promise<{ started: number; moreNow: boolean; moreLater: boolean }> {
    let started = 0;
    let moreNow = false;
    let moreLater = false;
    const endpoints = shuffled(await endpointsWithWork(db, iso(clock())));
    const claimable: EndpointRow[] = [];
    for (const endpoint of endpoints) {
      if (stopping) break;
      let made = 0;
      if (endpoint.has_events) {
        const fanned = await fanOut(endpoint);
        made = fanned.made;
        moreNow ||= fanned.full;
      }
      if (endpoint.has_due || made > 0) claimable.push(endpoint);
    }
    // While other accounts have work, each holds at most an equal share of the places.
    const accounts = new Set(claimable.map((endpoint) => endpoint.account_id)).size;
    const share = accounts > 1 ? Math.max(1, Math.floor(options.concurrency / accounts)) : accountAlone;
    for (const endpoint of claimable) {
      if (stopping) break;
      const place = `${endpoint.account_id}/${endpoint.id}`;
      const free = Math.min(
        options.concurrency - inFlight.size,
        options.endpointConcurrency - (perEndpoint.get(place) ?? 0),
        share - (perAccount.get(endpoint.account_id) ?? 0),
      );
      if (free <= 0) {
        moreLater = true;
        continue;
      }
      const now = clock();
      const token = randomUUID();
      const claimed = await db
        .transaction()
        .execute((tx) =>
          claimDeliveries(
            tx,
            { accountId: endpoint.account_id, id: endpoint.id },
            { now: iso(now), leasedUntil: iso(now + leaseMs), token, limit: free },
          ),
        );
      if (claimed.length === free) moreLater = true;
      if (claimed.length === 0) continue;
      const events = new Map(
        (
          await findEvents(
            db,
            endpoint.account_id,
            claimed.map((d) => d.event_id),
          )
        ).map((e) => [e.id, e]),
      );
      for (const delivery of claimed) launch(endpoint, delivery, events.get(delivery.event_id), token);
      started += claimed.length;
    }
    return { started, moreNow, moreLater };
  }

  async function run() {
    while (!stopping) {
      let next = { moreNow: false, moreLater: false };
      try {
        next = await pass();
      } catch (error) {
        log.warn({ err: error }, 'webhook worker pass failed; trying again');
      }
      if (stopping) break;
      waitingForPlace = next.moreLater;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => wake?.(), next.moreNow ? 0 : pollIntervalMs);
        // Attempts ending within a few milliseconds of each other wake one pass, which claims for all of them.
        wake = () => {
          wake = null;
          clearTimeout(timer);
          setTimeout(resolve, stopping ? 0 : 5);
        };
      });
    }
  }

  return {
    start() {
      loop = run();
    },
    async runOnce() {
      const { started } = await pass();
      await Promise.all(inFlight);
      return started;
    },
    async stop(graceMs) {
      stopping = true;
      wake?.();
      await loop;
      const cut = setTimeout(() => shutdown.abort(), graceMs);
      await Promise.all(inFlight);
      clearTimeout(cut);
    },
  };
}

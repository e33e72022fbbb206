import type { Config } from '../config.ts';
import type { Db, Executor } from '../db/database.ts';
import { type ExpectedVersions, lockRoot, type Versioned } from '../db/roots.ts';
import { awaitEventWriters, newestEventId } from '../events/events.repository.ts';
import { newId } from '../ids.ts';
import { AppError, bodyItem, invalid, notFound, type ProblemItem, throwIfProblems } from '../problems.ts';
import { decodeNextKey, encodeNextKey } from '../shared/next-key.ts';
import type { RequestScope } from '../shared/scope.ts';
import { urlProblem } from './destinations.ts';
import { isSealed, newSecret, open, type SecretKey, seal, secretKeyOf } from './secrets.ts';
import {
  countDisabledEndpoints,
  countEndpoints,
  countPendingDeliveries,
  type DeliveryRow,
  deleteEndpoint as deleteEndpointRow,
  type EndpointRow,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  listDeliveries as listDeliveryRows,
  listEndpoints,
  listUnsealedEndpoints,
  lockEndpoint,
  updateDelivery,
  updateEndpoint,
} from './webhooks.repository.ts';
import {
  type Delivery,
  type DeliveryListQuery,
  MAX_ENDPOINTS_PER_ACCOUNT,
  SECRET_OVERLAP_HOURS,
  type WebhookEndpoint,
  type WebhookEndpointCreateBody,
  type WebhookEndpointPatchBody,
  type WebhookEndpointWithSecret,
} from './webhooks.schemas.ts';

/** What the webhook routes and the worker take from the configuration. */
export interface WebhookSettings {
  secretKey: SecretKey | null;
  allowPrivate: boolean;
}

export function webhookSettings(config: Config): WebhookSettings {
  return { secretKey: secretKeyOf(config.webhooksSecretKey), allowPrivate: config.webhooksAllowPrivate };
}

export function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    eventTypes: JSON.parse(row.event_types),
    description: row.description,
    isEnabled: Boolean(row.is_enabled),
    disabledReason: row.disabled_reason,
    failingSince: row.failing_since,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toDelivery(row: DeliveryRow): Delivery {
  return {
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    attempts: JSON.parse(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The types an endpoint's fan-out keeps, or null for every one. */
export function subscribedTypes(row: EndpointRow): string[] | null {
  const types: string[] = JSON.parse(row.event_types);
  return types.includes('*') ? null : types;
}

function endpointProblems(
  body: { url?: string; eventTypes?: string[] },
  settings: WebhookSettings,
): ProblemItem[] {
  const problems: ProblemItem[] = [];
  const urlIssue = body.url === undefined ? null : urlProblem(body.url, settings.allowPrivate);
  if (urlIssue !== null) problems.push(bodyItem('destination_not_allowed', '/url', urlIssue));
  if (body.eventTypes && body.eventTypes.length > 1 && body.eventTypes.includes('*')) {
    problems.push(bodyItem('wildcard_not_alone', '/eventTypes', '"*" stands for every type and comes alone'));
  }
  return problems;
}

/** A refused destination alone answers its own code, saying why; with other problems beside it, rule_violation. */
function throwIfEndpointProblems(problems: ProblemItem[]): void {
  const [first] = problems;
  if (problems.length === 1 && first?.code === 'destination_not_allowed') {
    throw new AppError(
      'destination_not_allowed',
      `The webhook destination is not allowed: ${first.pointer} ${first.message}`,
      { errors: problems },
    );
  }
  throwIfProblems(problems);
}

const withSecret = (row: EndpointRow, secret: string): WebhookEndpointWithSecret => ({
  ...toEndpoint(row),
  secret,
});

export async function createEndpoint(
  scope: RequestScope,
  { settings, body }: { settings: WebhookSettings; body: WebhookEndpointCreateBody },
): Promise<Versioned<WebhookEndpointWithSecret>> {
  const { db } = scope;
  const accountId = scope.account.id;
  throwIfEndpointProblems(endpointProblems(body, settings));
  return db.transaction().execute(async (tx) => {
    if ((await countEndpoints(tx, accountId)) >= MAX_ENDPOINTS_PER_ACCOUNT) {
      throw invalid('rule_violation', [
        bodyItem(
          'too_many_endpoints',
          '',
          `An account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints`,
        ),
      ]);
    }
    const now = scope.now().toISOString();
    const id = newId('webhookEndpoint');
    const secret = newSecret();
    await awaitEventWriters(tx, accountId);
    const row: EndpointRow = {
      account_id: accountId,
      id,
      url: body.url,
      event_types: JSON.stringify(body.eventTypes),
      description: body.description ?? null,
      is_enabled: true,
      disabled_reason: null,
      secret: seal(secret, settings.secretKey, { accountId, id }),
      previous_secret: null,
      previous_secret_expires_at: null,
      failing_since: null,
      // Events recorded from now on: with no write in flight, every one committed later has a greater id.
      last_event_id: await newestEventId(tx, accountId),
      version: 1,
      created_at: now,
      updated_at: now,
    };
    await insertEndpoint(tx, row);
    return { value: withSecret(row, secret), version: row.version };
  });
}

export async function listEndpointsOf(scope: RequestScope): Promise<{ webhookEndpoints: WebhookEndpoint[] }> {
  const { db } = scope;
  const accountId = scope.account.id;
  return { webhookEndpoints: (await listEndpoints(db, accountId)).map(toEndpoint) };
}

async function existingEndpoint(db: Executor, accountId: string, id: string): Promise<EndpointRow> {
  const row = await findEndpoint(db, accountId, id);
  if (!row) throw notFound('Webhook endpoint', id);
  return row;
}

export async function getEndpoint(scope: RequestScope, id: string): Promise<Versioned<WebhookEndpoint>> {
  const { db } = scope;
  const accountId = scope.account.id;
  const row = await existingEndpoint(db, accountId, id);
  return { value: toEndpoint(row), version: row.version };
}

/** Opens a write to an endpoint under If-Match: its version moves, or 404 / 412. */
async function lockEndpointRoot(
  tx: Executor,
  accountId: string,
  id: string,
  expected: ExpectedVersions,
): Promise<EndpointRow> {
  const row = await lockRoot(tx, 'webhook_endpoints', { accountId, id }, expected);
  if (!row) throw notFound('Webhook endpoint', id);
  return row;
}

export async function patchEndpoint(
  scope: RequestScope,
  {
    settings,
    id,
    body,
    expected,
  }: { settings: WebhookSettings; id: string; body: WebhookEndpointPatchBody; expected: ExpectedVersions },
): Promise<Versioned<WebhookEndpoint>> {
  const { db } = scope;
  const accountId = scope.account.id;
  throwIfEndpointProblems(endpointProblems(body, settings));
  return db.transaction().execute(async (tx) => {
    const current = await lockEndpointRoot(tx, accountId, id, expected);
    const wasEnabled = Boolean(current.is_enabled);
    const enabling = body.isEnabled === true && !wasEnabled;
    const disabling = body.isEnabled === false && wasEnabled;
    if (enabling) await awaitEventWriters(tx, accountId);
    const row = await updateEndpoint(tx, accountId, id, {
      url: body.url ?? current.url,
      event_types: body.eventTypes ? JSON.stringify(body.eventTypes) : current.event_types,
      description: body.description !== undefined ? body.description : current.description,
      ...(disabling ? { is_enabled: false, disabled_reason: 'manual' as const } : {}),
      // Enabled again, it starts afresh: no failure run, and the events from now on (not those it missed).
      ...(enabling
        ? {
            is_enabled: true,
            disabled_reason: null,
            failing_since: null,
            last_event_id: await newestEventId(tx, accountId),
          }
        : {}),
    });
    if (!row) throw notFound('Webhook endpoint', id);
    return { value: toEndpoint(row), version: row.version };
  });
}

export async function deleteEndpoint(
  scope: RequestScope,
  { id, expected }: { id: string; expected: ExpectedVersions },
): Promise<void> {
  const { db } = scope;
  const accountId = scope.account.id;
  await db.transaction().execute(async (tx) => {
    await lockEndpointRoot(tx, accountId, id, expected);
    await deleteEndpointRow(tx, accountId, id);
  });
}

/**
 * A new current secret; the one it replaces keeps signing (a second signature) for SECRET_OVERLAP_HOURS, so
 * receivers can switch without losing a delivery. A rotation within the overlap drops the oldest.
 */
export async function rotateSecret(
  scope: RequestScope,
  { settings, id }: { settings: WebhookSettings; id: string },
): Promise<Versioned<WebhookEndpointWithSecret>> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    const current = await lockEndpointRoot(tx, accountId, id, null);
    const secret = newSecret();
    const row = await updateEndpoint(tx, accountId, id, {
      secret: seal(secret, settings.secretKey, { accountId, id }),
      previous_secret: current.secret,
      previous_secret_expires_at: new Date(
        scope.now().getTime() + SECRET_OVERLAP_HOURS * 3_600_000,
      ).toISOString(),
    });
    if (!row) throw notFound('Webhook endpoint', id);
    return { value: withSecret(row, secret), version: row.version };
  });
}

export async function listDeliveries(
  scope: RequestScope,
  { endpointId, query }: { endpointId: string; query: DeliveryListQuery },
): Promise<{ deliveries: Delivery[]; nextKey?: string }> {
  const { db } = scope;
  const accountId = scope.account.id;
  const limit = query.limit ?? 25;
  const beforeEventId = query.nextKey === undefined ? null : decodeNextKey(query.nextKey, 'event');
  await existingEndpoint(db, accountId, endpointId);
  const rows = await listDeliveryRows(
    db,
    { accountId, id: endpointId },
    { status: query.status ?? null, beforeEventId, limit: limit + 1 },
  );
  const page = rows.slice(0, limit);
  const deliveries = page.map(toDelivery);
  const last = page.at(-1);
  return rows.length > limit && last ? { deliveries, nextKey: encodeNextKey(last.event_id) } : { deliveries };
}

/**
 * Makes a delivery due at once, whatever its state; once a failed delivery's three days are over, the retry is
 * one attempt. An endpoint that is disabled sends nothing, so its deliveries are not retried (422).
 */
export async function retryDelivery(
  scope: RequestScope,
  { endpointId, eventId }: { endpointId: string; eventId: string },
): Promise<Delivery> {
  const { db } = scope;
  const accountId = scope.account.id;
  return db.transaction().execute(async (tx) => {
    const endpoint = await existingEndpoint(tx, accountId, endpointId);
    const key = { accountId, endpointId, eventId };
    const delivery = await findDelivery(tx, key);
    if (!delivery) throw notFound('Delivery of event', eventId);
    if (!endpoint.is_enabled) {
      throw new AppError('rule_violation', 'The endpoint is disabled: enable it (PATCH isEnabled) first', {
        errors: [{ code: 'endpoint_disabled', in: 'path', pointer: '/endpointId', message: 'is disabled' }],
      });
    }
    const at = scope.now().getTime();
    const now = new Date(at).toISOString();
    const row = await updateDelivery(tx, key, {
      status: 'pending',
      next_attempt_at: now,
      give_up_at: new Date(Math.max(Date.parse(delivery.give_up_at), at)).toISOString(),
      updated_at: now,
    });
    if (!row) throw notFound('Delivery of event', eventId);
    return toDelivery(row);
  });
}

/** Monitoring counts stop here, so that reading one stays cheap however far things have gone. */
export const MONITORING_COUNT_CAP = 10_000;

/** The queue depth: deliveries to enabled endpoints that still wait for a 2xx (up to MONITORING_COUNT_CAP). */
export function pendingDeliveries(db: Db): Promise<number> {
  return countPendingDeliveries(db, MONITORING_COUNT_CAP);
}

/** Endpoints the worker disabled because their attempts failed for 5 days (up to MONITORING_COUNT_CAP). */
export function endpointsDisabledFailing(db: Db): Promise<number> {
  return countDisabledEndpoints(db, 'failing', MONITORING_COUNT_CAP);
}

/** Seals every secret stored unsealed, once WEBHOOKS_SECRET_KEY is set; answers how many endpoints changed. */
export async function sealStoredSecrets(db: Db, settings: WebhookSettings): Promise<number> {
  const key = settings.secretKey;
  if (key === null) return 0;
  const found = await listUnsealedEndpoints(db);
  for (const { account_id: accountId, id } of found) {
    // Under the row's lock: a rotation meanwhile must not be undone.
    await db.transaction().execute(async (tx) => {
      const row = await lockEndpoint(tx, accountId, id);
      if (!row) return;
      const owner = { accountId, id };
      const resealed = (stored: string | null) =>
        stored === null || isSealed(stored) ? stored : seal(open(stored, null, owner), key, owner);
      await updateEndpoint(tx, accountId, id, {
        secret: resealed(row.secret) as string,
        previous_secret: resealed(row.previous_secret),
      });
    });
  }
  return found.length;
}

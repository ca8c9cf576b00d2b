/**
 * POST /webhooks: verify, store, answer. Nothing else happens in the request; the pipelines pick
 * the event up from the inbox. The Service retries any delivery without a 2xx within 10 s
 * (CONTRACT.md, Webhooks), so the answer comes only after the inbox has stored the event.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics/metrics.js';
import { isKnownEventType } from '../service/events.js';
import type { Clock } from '../util/clock.js';
import { BodyTooLargeError, boundedBodyParser } from './boundedBody.js';
import { errorBody } from './errors.js';
import { verifyWebhookSignature } from './signature.js';
import type { WebhookInbox } from './types.js';
import { classifyWebhookBody } from './webhookIntake.js';

export interface WebhookRouteDeps {
  webhookSecrets: readonly string[];
  maxBodyBytes: number;
  inbox: WebhookInbox;
  metrics: Metrics;
  clock: Clock;
}

export const SIGNATURE_HEADER = 'x-service-signature';

const EMPTY = Buffer.alloc(0);

/** Asked of the Service when the inbox cannot store (the database is away): a few seconds. */
export const STORE_RETRY_AFTER_S = 5;

/**
 * The Service gives up on a delivery after 10 s (CONTRACT.md, Webhooks). A store that hangs (the
 * database unreachable without a refusal) is answered 503 before then, so the Service retries
 * instead of counting a timeout; should the store still commit later, the retry is a duplicate.
 */
export const STORE_TIMEOUT_MS = 8_000;

/** Register with `app.register(...)`: the raw-body parsers then apply to this route only. */
export async function webhookRoutes(app: FastifyInstance, deps: WebhookRouteDeps): Promise<void> {
  const { inbox, metrics, clock, maxBodyBytes } = deps;
  const secrets = deps.webhookSecrets.filter((s) => s !== '');

  // The signature covers the exact bytes, so the body must reach the handler unparsed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', boundedBodyParser(maxBodyBytes));

  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof BodyTooLargeError) {
      metrics.webhookRejections.inc({ reason: 'too_large' });
      request.log.warn({ limit: maxBodyBytes }, 'webhook rejected: body too large');
      if (err.unread) reply.header('connection', 'close');
      return reply.code(413).send(errorBody('WEBHOOK_TOO_LARGE', err.message));
    }
    throw err; // to the server-wide handler
  });

  app.post('/webhooks', async (request, reply) => {
    const receivedAt = clock.now();
    const raw = Buffer.isBuffer(request.body) ? request.body : EMPTY;

    const check = verifyWebhookSignature(raw, request.headers[SIGNATURE_HEADER], secrets);
    if (!check.ok) {
      if (check.reason === 'no_secret') {
        request.log.error('webhook refused: no webhook secret configured (SERVICE_WEBHOOK_SECRET)');
        return reply.code(503).send(errorBody('WEBHOOK_NOT_CONFIGURED', 'webhook receiver not configured'));
      }
      metrics.webhookRejections.inc({ reason: 'bad_signature' });
      // Never the signature value itself: only why it failed.
      request.log.warn(
        { reason: check.reason, bytes: raw.length, ip: request.ip },
        'webhook rejected: bad signature',
      );
      return reply.code(401).send(errorBody('WEBHOOK_BAD_SIGNATURE', 'signature missing or invalid'));
    }

    const intake = classifyWebhookBody(raw, receivedAt);
    const log = request.log.child({ eventId: intake.record.eventId, callId: intake.record.callId });
    if (check.secretIndex > 0) log.debug('webhook signed with the previous secret');

    let stored: { duplicate: boolean };
    try {
      stored = await withinTime(inbox.store(intake.record), clock, STORE_TIMEOUT_MS);
    } catch (err) {
      log.error({ err }, 'webhook not stored; answering 503 so the Service retries');
      return reply
        .code(503)
        .header('retry-after', String(STORE_RETRY_AFTER_S))
        .send(errorBody('WEBHOOK_STORE_UNAVAILABLE', 'event not stored; retry later'));
    }

    if (intake.outcome === 'rejected') {
      metrics.webhookRejections.inc({ reason: intake.rejection });
      log.warn({ rejection: intake.rejection, reason: intake.reason }, 'webhook stored as rejected');
      return reply.code(202).send({ status: 'rejected', reason: intake.reason });
    }
    const type = intake.event.type;
    // Only the spec's five names become label values, so a new event type cannot grow the series.
    metrics.webhooksReceived.inc({ type: isKnownEventType(type) ? type : 'other' });
    if (stored.duplicate) {
      log.debug({ type }, 'webhook duplicate ignored');
      return reply.code(200).send({ status: 'duplicate' });
    }
    log.debug({ type }, 'webhook accepted');
    return reply.code(202).send({ status: 'accepted' });
  });
}

/** `work`, or a rejection once `ms` have passed on the clock (the work itself goes on). */
function withinTime<T>(work: Promise<T>, clock: Clock, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimer(() => reject(new Error(`not stored within ${ms} ms`)), ms);
    work.then(
      (value) => {
        clock.clearTimer(timer);
        resolve(value);
      },
      (err: unknown) => {
        clock.clearTimer(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from '../log/logger.js';
import type { AccessKeys } from './access.js';
import type { Metrics } from '../metrics/metrics.js';
import type { WebhookEvent } from '../service/events.js';
import type { Clock } from '../util/clock.js';

/** One authentic webhook delivery, as handed to the inbox before the receiver answers. */
export interface InboxRecord {
  /** The event's `id`, or null when the body was not an object carrying one. */
  eventId: string | null;
  type: string | null;
  callId: string | null;
  /** The body exactly as signed (UTF-8), so a rejected event can be inspected or replayed. */
  rawBody: string;
  outcome: 'accepted' | 'rejected';
  rejectReason?: string;
  /** When the receiver got the delivery (epoch ms, from the injected clock). */
  receivedAt: number;
  /** The validated event of an accepted delivery, so the inbox need not parse the body again. */
  event?: WebhookEvent;
}

/**
 * Where authentic deliveries are made durable. The receiver answers 2xx only after `store`
 * resolves (CONTRACT.md, Webhooks), so an implementation must not resolve before the record is
 * committed. Dedup is by event id: a second store of the same id resolves `{ duplicate: true }`.
 */
export interface WebhookInbox {
  store(e: InboxRecord): Promise<{ duplicate: boolean }>;
}

export interface ReadinessCheckResult {
  ok: boolean;
  detail?: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, ReadinessCheckResult>;
}

export interface HttpServerDeps {
  logger: Logger;
  /** Current secret first, then the previous one during a rotation; empty entries are ignored. */
  webhookSecrets: readonly string[];
  /** Largest webhook body accepted; larger ones get 413. */
  maxBodyBytes: number;
  inbox: WebhookInbox;
  status: () => Promise<unknown>;
  readiness: () => Promise<ReadinessReport>;
  metrics: Metrics;
  /** Defaults to the system clock. */
  clock?: Clock;
  /** The admin token's derived keys; default: no token (operator routes answer loopback only). */
  access?: AccessKeys;
  /** More routes behind the operator access rules (/admin/*, /console). */
  operatorRoutes?: FastifyPluginAsync[];
  /** Routes open to anyone, such as the console's sign-in page; they must reveal nothing. */
  publicRoutes?: FastifyPluginAsync[];
}

/**
 * Decides what an authentic (signature-checked) webhook body becomes in the inbox: an accepted
 * event, or a rejected record with the reason. Pure; the route does the I/O. Why rejected bodies get
 * a 2xx, and NUL bytes: docs/reliability.md, "What an authentic webhook body becomes".
 */
import { WebhookEventError, parseWebhookEvent, type WebhookEvent } from '../service/events.js';
import type { InboxRecord } from './types.js';

export type WebhookIntake =
  | { outcome: 'accepted'; event: WebhookEvent; record: InboxRecord }
  | { outcome: 'rejected'; rejection: 'malformed' | 'invalid_event'; reason: string; record: InboxRecord };

/** Bounds what a rejected body can put into the inbox's id columns and the reason text. */
const MAX_ID_CHARS = 200;
const MAX_REASON_CHARS = 500;

export function classifyWebhookBody(raw: Buffer, receivedAt: number): WebhookIntake {
  // JSON is UTF-8 (RFC 8259); invalid sequences become U+FFFD and fail parsing or validation below.
  // A raw NUL is never valid JSON either, so replacing it changes no accepted event.
  const rawBody = storable(raw.toString('utf8'));
  let json: unknown;
  try {
    json = JSON.parse(rawBody);
  } catch (err) {
    const reason = clip(`malformed JSON: ${errorMessage(err)}`, MAX_REASON_CHARS);
    const record = rejected(rawBody, receivedAt, reason, null);
    return { outcome: 'rejected', rejection: 'malformed', reason, record };
  }
  let event: WebhookEvent;
  try {
    if (hasNul(json)) throw new Error('a string contains U+0000, which cannot be stored');
    event = parseWebhookEvent(json);
  } catch (err) {
    const detail = err instanceof WebhookEventError ? err.problems.join('; ') : errorMessage(err);
    const reason = clip(`invalid event: ${detail}`, MAX_REASON_CHARS);
    const record = rejected(rawBody, receivedAt, reason, json);
    return { outcome: 'rejected', rejection: 'invalid_event', reason, record };
  }
  return {
    outcome: 'accepted',
    event,
    record: {
      eventId: event.id,
      type: event.type,
      callId: event.data.call_id,
      rawBody,
      outcome: 'accepted',
      receivedAt,
      event,
    },
  };
}

/** A rejected record keeps whatever ids the body did carry, so an operator can find it. */
function rejected(rawBody: string, receivedAt: number, reason: string, json: unknown): InboxRecord {
  const data = isObject(json) ? json['data'] : undefined;
  return {
    eventId: pickString(json, 'id'),
    type: pickString(json, 'type'),
    callId: pickString(data, 'call_id'),
    rawBody,
    outcome: 'rejected',
    rejectReason: reason,
    receivedAt,
  };
}

function pickString(value: unknown, key: string): string | null {
  if (!isObject(value)) return null;
  const field = value[key];
  return typeof field === 'string' && field !== '' ? clip(storable(field), MAX_ID_CHARS) : null;
}

function storable(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}

/** Whether any string (key or value) in parsed JSON contains U+0000. */
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(hasNul);
  if (isObject(value)) return Object.entries(value).some(([k, v]) => k.includes('\u0000') || hasNul(v));
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

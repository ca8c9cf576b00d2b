/**
 * Webhook events (spec section 6 names them; the body shape is CONTRACT.md "Webhooks", defined
 * in contract.ts). Parse only AFTER the signature over the raw body has been verified.
 */
import type { z } from 'zod';
import { webhookEventSchema } from './contract.js';
import { describeIssues, formatIssuePath } from './validate.js';

export { webhookEventSchema };

/** The five events of spec section 6. Other types are parsed too, so a receiver can store and skip them. */
export const WEBHOOK_EVENT_TYPES = [
  'call.started',
  'call.completed',
  'transcript.ready',
  'analysis.ready',
  'followup.generated',
] as const;
export type KnownWebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export type WebhookEvent = z.infer<typeof webhookEventSchema>;

export function isKnownEventType(type: string): type is KnownWebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
}

/** A webhook body that is not an event; `field` names the first bad path (e.g. `data.call_id`). */
export class WebhookEventError extends Error {
  readonly code = 'SERVICE_BAD_EVENT';
  constructor(
    message: string,
    readonly field: string,
    readonly problems: readonly string[],
  ) {
    super(message);
    this.name = 'WebhookEventError';
  }
}

/** Validates a parsed webhook body; unknown fields are kept. Throws WebhookEventError. */
export function parseWebhookEvent(json: unknown): WebhookEvent {
  const result = webhookEventSchema.safeParse(json);
  if (result.success) return result.data;
  const problems = describeIssues(result.error.issues);
  const field = formatIssuePath(result.error.issues[0]?.path ?? []);
  const more = problems.length > 1 ? ` (+${problems.length - 1} more)` : '';
  throw new WebhookEventError(`webhook event: ${problems[0]}${more}`, field, problems);
}

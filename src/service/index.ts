/** The Service API client: what the rest of crm-sync imports. */
export { createServiceClient, DEFAULT_MAX_ATTEMPTS, DEFAULT_TIMEOUT_MS } from './client.js';
export * from './errors.js';
export * from './types.js';
export {
  isKnownEventType,
  parseWebhookEvent,
  WEBHOOK_EVENT_TYPES,
  WebhookEventError,
  type KnownWebhookEventType,
  type WebhookEvent,
} from './events.js';
export { decideRetry, type RetryDecision } from './retry.js';
export { parseRetryAfter } from './retryAfter.js';

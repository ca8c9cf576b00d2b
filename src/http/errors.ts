/**
 * Stable error codes of the HTTP surface, answered as `{"error": {"code", "message"}}` (the same
 * shape the Service uses). An operator can search logs and docs for these codes.
 *
 * - WEBHOOK_BAD_SIGNATURE (401): X-Service-Signature missing, malformed or matching no secret.
 * - WEBHOOK_TOO_LARGE (413): body over WEBHOOK_MAX_BODY_BYTES.
 * - WEBHOOK_NOT_CONFIGURED (503): no webhook secret configured; 503 so the Service keeps retrying
 *   (for up to 24 h) while the operator fixes the configuration, instead of losing events.
 * - WEBHOOK_STORE_UNAVAILABLE (503): the inbox could not store the event; the Service retries.
 * - STATUS_UNAVAILABLE (500): the status source failed.
 * - ADMIN_SIGN_IN_REQUIRED (401): an operator route without the admin token (ADMIN_TOKEN is set).
 * - ADMIN_LOOPBACK_ONLY (403): an operator route from another host while ADMIN_TOKEN is not set.
 * - ADMIN_CROSS_SITE (403): a state-changing request from another site, or a form without its CSRF
 *   token.
 * - NOT_FOUND (404), BAD_REQUEST (400 and other 4xx from the framework), INTERNAL (500).
 */
export type HttpErrorCode =
  | 'WEBHOOK_BAD_SIGNATURE'
  | 'WEBHOOK_TOO_LARGE'
  | 'WEBHOOK_NOT_CONFIGURED'
  | 'WEBHOOK_STORE_UNAVAILABLE'
  | 'STATUS_UNAVAILABLE'
  | 'ADMIN_SIGN_IN_REQUIRED'
  | 'ADMIN_LOOPBACK_ONLY'
  | 'ADMIN_CROSS_SITE'
  | 'NOT_FOUND'
  | 'BAD_REQUEST'
  | 'INTERNAL';

export interface HttpErrorBody {
  error: { code: HttpErrorCode; message: string };
}

export function errorBody(code: HttpErrorCode, message: string): HttpErrorBody {
  return { error: { code, message } };
}

/**
 * Stable error codes of the HTTP surface, answered as `{"error": {"code", "message"}}` (the same
 * shape the Service uses), for an operator to search logs and docs for. Each code and its status:
 * README, "Error codes".
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

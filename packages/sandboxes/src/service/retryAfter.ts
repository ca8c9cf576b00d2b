/**
 * How the sandbox writes Retry-After. RFC 9110 allows delta-seconds or an HTTP-date; CONTRACT.md
 * asks clients to accept both and fractional seconds too, so the sandbox can send any of them.
 */
export type RetryAfterFormat = 'seconds' | 'http-date' | 'fractional' | 'none';
export const RETRY_AFTER_FORMATS: readonly RetryAfterFormat[] = [
  'seconds',
  'http-date',
  'fractional',
  'none',
];

/**
 * The header value for a retry at `retryAtMs`, or undefined for 'none'. Whole seconds and dates
 * round UP, so a client that waits exactly as told never arrives before the slot frees.
 */
export function formatRetryAfter(
  retryAtMs: number,
  nowMs: number,
  format: RetryAfterFormat,
): string | undefined {
  const deltaMs = Math.max(0, retryAtMs - nowMs);
  switch (format) {
    case 'seconds':
      return String(Math.ceil(deltaMs / 1000));
    case 'fractional':
      return (deltaMs / 1000).toFixed(3);
    case 'http-date':
      // HTTP-dates have whole-second resolution.
      return new Date(Math.ceil(retryAtMs / 1000) * 1000).toUTCString();
    case 'none':
      return undefined;
  }
}

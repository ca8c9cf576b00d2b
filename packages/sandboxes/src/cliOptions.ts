/** Reading the sandboxes' command-line (or SANDBOX_* environment) options. */
import type { CrmFaultRates } from './crmFaults.js';

/** A number option from 0 to `max`, or `fallback` when absent; throws a message naming the flag. */
export function toNumber(
  name: string,
  value: string | undefined,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > max) throw new Error(`--${name} must be a number from 0 to ${max}`);
  return n;
}

/** `--rate-limit-rate`, `--error-rate`, `--fault-seed` of a CRM sandbox. */
export function crmFaultOptions(opts: Record<string, string | undefined>): {
  faultRates: Partial<CrmFaultRates>;
  faultSeed?: number;
} {
  return {
    faultRates: {
      rateLimitRate: toNumber('rate-limit-rate', opts.rateLimitRate, 0, 1),
      errorRate: toNumber('error-rate', opts.errorRate, 0, 1),
    },
    ...(opts.faultSeed !== undefined && { faultSeed: Math.floor(toNumber('fault-seed', opts.faultSeed, 0)) }),
  };
}

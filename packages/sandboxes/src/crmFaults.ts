/**
 * Random faults for the CRM sandboxes at configurable rates, for chaos runs: the CRM's own
 * rate-limit answer, and 500/502/503. A 500 or 502 may come after the request was carried out
 * (a seeded share, `actedShare`), as a real server that failed while answering: a client that
 * retries such a write must not write twice. A 503 and a rate-limit answer never act. Each
 * sandbox turns a decision into its vendor's wire shape; the draws are seeded, so a seed repeats
 * a run's faults. Queued one-shot faults (each sandbox's `POST /_admin/faults`) come first.
 */
import type { Random } from './service/rng.js';

export interface CrmFaultRates {
  /** Share of API requests answered with the CRM's rate-limit error. 0..1 */
  rateLimitRate: number;
  /** Share of API requests answered 500/502/503. 0..1 */
  errorRate: number;
  /** Share of 500s and 502s whose request was carried out first. 0..1, default 0.5 */
  actedShare: number;
}

export const NO_CRM_FAULTS: CrmFaultRates = { rateLimitRate: 0, errorRate: 0, actedShare: 0.5 };

export type CrmFaultDecision =
  { kind: 'none' } | { kind: 'rate_limit' } | { kind: 'error'; status: 500 | 502 | 503; acted: boolean };

const STATUSES = [500, 502, 503] as const;

export function decideCrmFault(rates: CrmFaultRates, random: Random): CrmFaultDecision {
  if (rates.rateLimitRate > 0 && random() < rates.rateLimitRate) return { kind: 'rate_limit' };
  if (rates.errorRate > 0 && random() < rates.errorRate) {
    const status = STATUSES[Math.floor(random() * STATUSES.length)] ?? 500;
    return { kind: 'error', status, acted: status !== 503 && random() < rates.actedShare };
  }
  return { kind: 'none' };
}

/** Checks a partial update (admin API, CLI); returns an error message or the merged rates. */
export function mergeCrmFaultRates(current: CrmFaultRates, update: unknown): CrmFaultRates | string {
  if (typeof update !== 'object' || update === null || Array.isArray(update))
    return 'body must be a JSON object';
  const next = { ...current };
  for (const key of ['rateLimitRate', 'errorRate', 'actedShare'] as const) {
    const value = (update as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1)
      return `${key} must be a number between 0 and 1`;
    next[key] = value;
  }
  return next;
}

/** One randomly faulted request, for `GET /_admin/fault-rates` (what a chaos run checks against). */
export interface CrmFaultRecord {
  at: string;
  method: string;
  path: string;
  /** `rate_limit`, `500`, `502`, `503`. */
  fault: string;
  /** The request was carried out before the error answer. */
  acted: boolean;
}

/** The rates in force, the seeded draws and the log of what was injected. */
export class CrmFaultInjector {
  readonly log: CrmFaultRecord[] = [];

  constructor(
    public rates: CrmFaultRates,
    private readonly random: Random,
  ) {}

  /** Draws the fault for one request and logs it. */
  decide(method: string, path: string, nowMs: number): CrmFaultDecision {
    const decision = decideCrmFault(this.rates, this.random);
    if (decision.kind !== 'none') {
      this.log.push({
        at: new Date(nowMs).toISOString(),
        method,
        path,
        fault: decision.kind === 'error' ? String(decision.status) : 'rate_limit',
        acted: decision.kind === 'error' && decision.acted,
      });
    }
    return decision;
  }

  /** `{rates, injected: {fault: count}, acted}` for the admin API. */
  summary() {
    const injected: Record<string, number> = {};
    for (const r of this.log) injected[r.fault] = (injected[r.fault] ?? 0) + 1;
    return { rates: this.rates, injected, acted: this.log.filter((r) => r.acted).length };
  }
}

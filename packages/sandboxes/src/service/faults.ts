/**
 * Injected faults for API requests (pure decisions; faultInjection.ts carries them out). Decided
 * after auth and the limiter: a faulted request has already taken a slot, as it would on a real
 * server whose proxy fails after counting it.
 *
 * What a fault did is the sandbox's truth, recorded in the fault log: a 503, a 429 and a drop
 * before the answer never run the handler; a 500, a 502 and a stall may have run it first (a
 * seeded draw, `actedShare`), which a client cannot tell from the outside: an ambiguous failure.
 */
import type { Random } from './rng.js';

export interface FaultSettings {
  /** Share of requests answered 500/502/503 (no body, or an HTML page like a proxy's). 0..1 */
  errorRate: number;
  /** Delay added before every API answer, in ms. */
  latencyMs: number;
  /** Share of requests whose socket is destroyed, before or in the middle of the answer. 0..1 */
  dropRate: number;
  /** Share of requests held for `stallMs` (past a client's timeout) before any answer. 0..1 */
  stallRate: number;
  /** How long a stall lasts. Default 20 000 ms, past the client's 15 s default request timeout. */
  stallMs: number;
  /** Share of requests answered 429 `rate_limited` with Retry-After although the plan has room. 0..1 */
  throttleRate: number;
  /** Retry-After (whole seconds) of an injected 429. Default 1. */
  throttleRetryAfterS: number;
  /** Share of ambiguous faults (500, 502, stall) whose handler ran before the failure. 0..1, default 0.5 */
  actedShare: number;
}

export const NO_FAULTS: FaultSettings = {
  errorRate: 0,
  latencyMs: 0,
  dropRate: 0,
  stallRate: 0,
  stallMs: 20_000,
  throttleRate: 0,
  throttleRetryAfterS: 1,
  actedShare: 0.5,
};

export type ErrorStatus = 500 | 502 | 503;

/** `acted`: run the handler first (its answer is then lost to the fault). */
export type FaultDecision =
  | { kind: 'none' }
  | { kind: 'drop'; phase: 'before' | 'mid' }
  | { kind: 'error'; status: ErrorStatus; html: boolean; acted: boolean }
  | { kind: 'stall'; ms: number; acted: boolean }
  | { kind: 'throttle'; retryAfterS: number };

const ERROR_STATUSES = [500, 502, 503] as const;

function chance(random: Random, rate: number): boolean {
  return rate > 0 && random() < rate;
}

/** Draws the fault for one request; a draw is only made for a rate above 0, so settings stay seedable. */
export function decideFault(settings: FaultSettings, random: Random): FaultDecision {
  if (chance(random, settings.dropRate)) return { kind: 'drop', phase: random() < 0.5 ? 'before' : 'mid' };
  if (chance(random, settings.errorRate)) {
    const status = ERROR_STATUSES[Math.floor(random() * ERROR_STATUSES.length)] ?? 500;
    const html = random() < 0.5;
    return { kind: 'error', status, html, acted: status !== 503 && random() < settings.actedShare };
  }
  if (chance(random, settings.stallRate))
    return { kind: 'stall', ms: settings.stallMs, acted: random() < settings.actedShare };
  if (chance(random, settings.throttleRate))
    return { kind: 'throttle', retryAfterS: settings.throttleRetryAfterS };
  return { kind: 'none' };
}

/** The fault's name in the fault log: `500`, `502`, `503`, `429`, `stall`, `drop-before`, `drop-mid`. */
export function faultLabel(fault: Exclude<FaultDecision, { kind: 'none' }>): string {
  switch (fault.kind) {
    case 'drop':
      return `drop-${fault.phase}`;
    case 'error':
      return String(fault.status);
    case 'stall':
      return 'stall';
    case 'throttle':
      return '429';
  }
}

/** A 503 and a 429 say the request was not acted on; anything else leaves the client guessing. */
export function isAmbiguous(fault: Exclude<FaultDecision, { kind: 'none' }>): boolean {
  return fault.kind === 'drop' || fault.kind === 'stall' || (fault.kind === 'error' && fault.status !== 503);
}

export function errorPage(status: number): string {
  const title =
    status === 502 ? 'Bad Gateway' : status === 503 ? 'Service Unavailable' : 'Internal Server Error';
  return `<html><head><title>${status} ${title}</title></head><body><h1>${status} ${title}</h1></body></html>\n`;
}

const SHARES = ['errorRate', 'dropRate', 'stallRate', 'throttleRate', 'actedShare'] as const;
const AMOUNTS = ['latencyMs', 'stallMs', 'throttleRetryAfterS'] as const;

/** Checks a partial fault update (admin API, CLI); returns an error message or the merged settings. */
export function mergeFaults(current: FaultSettings, update: unknown): FaultSettings | string {
  if (typeof update !== 'object' || update === null || Array.isArray(update))
    return 'body must be a JSON object';
  const next = { ...current };
  for (const key of [...SHARES, ...AMOUNTS]) {
    const value = (update as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      return `${key} must be a number >= 0`;
    if ((SHARES as readonly string[]).includes(key) && value > 1) return `${key} must be between 0 and 1`;
    next[key] = value;
  }
  return next;
}

/**
 * Injected faults for API requests. Decided after auth and the limiter: a faulted request has
 * already taken a slot, as it would on a real server whose proxy fails after counting it.
 * A faulted request has no side effect (the handler never runs).
 */
import type { Random } from './rng.js';

export interface FaultSettings {
  /** Share of requests answered 500/502/503 (no body, or an HTML page like a proxy's). 0..1 */
  errorRate: number;
  /** Delay added before every API answer, in ms. */
  latencyMs: number;
  /** Share of requests whose socket is destroyed without an answer. 0..1 */
  dropRate: number;
}

export const NO_FAULTS: FaultSettings = { errorRate: 0, latencyMs: 0, dropRate: 0 };

export type FaultDecision =
  { kind: 'none' } | { kind: 'drop' } | { kind: 'error'; status: 500 | 502 | 503; html: boolean };

const ERROR_STATUSES = [500, 502, 503] as const;

export function decideFault(settings: FaultSettings, random: Random): FaultDecision {
  if (settings.dropRate > 0 && random() < settings.dropRate) return { kind: 'drop' };
  if (settings.errorRate > 0 && random() < settings.errorRate) {
    const status = ERROR_STATUSES[Math.floor(random() * ERROR_STATUSES.length)] ?? 500;
    return { kind: 'error', status, html: random() < 0.5 };
  }
  return { kind: 'none' };
}

export function errorPage(status: number): string {
  const title =
    status === 502 ? 'Bad Gateway' : status === 503 ? 'Service Unavailable' : 'Internal Server Error';
  return `<html><head><title>${status} ${title}</title></head><body><h1>${status} ${title}</h1></body></html>\n`;
}

/** Checks a partial fault update (admin API, CLI); returns an error message or the merged settings. */
export function mergeFaults(current: FaultSettings, update: unknown): FaultSettings | string {
  if (typeof update !== 'object' || update === null || Array.isArray(update))
    return 'body must be a JSON object';
  const next = { ...current };
  for (const key of ['errorRate', 'dropRate', 'latencyMs'] as const) {
    const value = (update as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      return `${key} must be a number >= 0`;
    if (key !== 'latencyMs' && value > 1) return `${key} must be between 0 and 1`;
    next[key] = value;
  }
  return next;
}

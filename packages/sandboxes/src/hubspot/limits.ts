import type { Clock } from '../clock.js';
import type { RateLimitPolicy } from './errors.js';

/**
 * HubSpot's request limits per app: a rolling 10-second window (100 requests for private apps)
 * and a daily allowance (250,000+; private apps only, OAuth apps have none), reported in
 * `X-HubSpot-RateLimit-*` headers (developer changelog 2018-11-06 and "rate limit headers for
 * OAuth"). Searches have a limit of their own: "The search endpoints are rate limited to five
 * requests per second" (HubSpot CRM search guide, "Limitations"), and the ten-second limit
 * "excludes the CRM Search API" (HubSpot API usage guidelines), so a search counts in a strict
 * sliding second and the daily allowance, not in the ten-second window. All are configurable so
 * tests can hit them with a handful of requests.
 */
export interface RateLimitOptions {
  /** Requests allowed in any window (default 100). */
  perWindow?: number;
  /** Window length in ms (default 10,000). */
  windowMs?: number;
  /** Requests per UTC day for private-app tokens (default 250,000). */
  daily?: number;
  /** Searches allowed in any sliding second (default 5, HubSpot's documented search limit). */
  searchesPerSecond?: number;
}

/** The sliding window of the search limit. */
export const SEARCH_WINDOW_MS = 1_000;

export interface LimitVerdict {
  allowed: boolean;
  policy?: RateLimitPolicy;
  headers: Record<string, string>;
}

export interface Fault {
  status: number;
  policyName?: RateLimitPolicy;
  /** Only requests whose path contains this. */
  match?: string;
  /** A 5xx that comes after the request was carried out (the write happened, the answer is lost). */
  acted?: boolean;
  remaining: number;
}

export class RateLimits {
  readonly perWindow: number;
  readonly windowMs: number;
  readonly daily: number;
  readonly searchesPerSecond: number;
  /** 429s answered by the limiter, by policy (injected faults are not counted). */
  rejected: Record<RateLimitPolicy, number> = { TEN_SECONDLY_ROLLING: 0, DAILY: 0, SECONDLY: 0 };
  private windows = new Map<string, number[]>();
  private searches = new Map<string, number[]>();
  private days = new Map<string, { day: number; used: number }>();

  constructor(
    private readonly clock: Clock,
    options: RateLimitOptions = {},
  ) {
    this.perWindow = options.perWindow ?? 100;
    this.windowMs = options.windowMs ?? 10_000;
    this.daily = options.daily ?? 250_000;
    this.searchesPerSecond = options.searchesPerSecond ?? 5;
  }

  reset(): void {
    this.windows.clear();
    this.searches.clear();
    this.days.clear();
    this.rejected = { TEN_SECONDLY_ROLLING: 0, DAILY: 0, SECONDLY: 0 };
  }

  /**
   * Counts a request for `app` unless a limit is spent; `daily` is false for OAuth apps, `search`
   * is true for `POST /crm/objects/{version}/{type}/search`.
   */
  take(app: string, daily: boolean, search = false): LimitVerdict {
    const now = this.clock.now();
    const stamps = (this.windows.get(app) ?? []).filter((t) => t > now - this.windowMs);
    this.windows.set(app, stamps);
    const searchStamps = (this.searches.get(app) ?? []).filter((t) => t > now - SEARCH_WINDOW_MS);
    this.searches.set(app, searchStamps);
    const today = Math.floor(now / 86_400_000);
    let day = this.days.get(app);
    if (!day || day.day !== today) {
      day = { day: today, used: 0 };
      this.days.set(app, day);
    }
    const refuse = (policy: RateLimitPolicy): LimitVerdict => {
      this.rejected[policy] += 1;
      return { allowed: false, policy, headers: this.headers(stamps.length, day.used, daily) };
    };
    if (daily && day.used >= this.daily) return refuse('DAILY');
    if (search) {
      if (searchStamps.length >= this.searchesPerSecond) return refuse('SECONDLY');
      searchStamps.push(now);
    } else {
      if (stamps.length >= this.perWindow) return refuse('TEN_SECONDLY_ROLLING');
      stamps.push(now);
    }
    day.used += 1;
    return { allowed: true, headers: this.headers(stamps.length, day.used, daily) };
  }

  /** Headers for a response that did not pass the limiter (injected faults). */
  current(app: string, daily: boolean): Record<string, string> {
    const now = this.clock.now();
    const used = (this.windows.get(app) ?? []).filter((t) => t > now - this.windowMs).length;
    return this.headers(used, this.days.get(app)?.used ?? 0, daily);
  }

  private headers(usedInWindow: number, usedToday: number, daily: boolean): Record<string, string> {
    const perSecond = Math.max(1, Math.floor(this.perWindow / Math.max(1, this.windowMs / 1000)));
    const remaining = Math.max(0, this.perWindow - usedInWindow);
    const h: Record<string, string> = {
      'X-HubSpot-RateLimit-Interval-Milliseconds': String(this.windowMs),
      'X-HubSpot-RateLimit-Max': String(this.perWindow),
      'X-HubSpot-RateLimit-Remaining': String(remaining),
      'X-HubSpot-RateLimit-Secondly': String(perSecond),
      'X-HubSpot-RateLimit-Secondly-Remaining': String(Math.min(perSecond, remaining)),
    };
    if (daily) {
      h['X-HubSpot-RateLimit-Daily'] = String(this.daily);
      h['X-HubSpot-RateLimit-Daily-Remaining'] = String(Math.max(0, this.daily - usedToday));
    }
    return h;
  }
}

/** Queued faults: each answers the next `remaining` matching requests with its status. */
export class Faults {
  private queue: Fault[] = [];

  add(fault: Omit<Fault, 'remaining'> & { count?: number }): void {
    this.queue.push({ ...fault, remaining: fault.count ?? 1 });
  }

  clear(): void {
    this.queue = [];
  }

  /** The fault for this request, if any (consumes one use). */
  take(path: string): Fault | undefined {
    const fault = this.queue.find((f) => f.remaining > 0 && (!f.match || path.includes(f.match)));
    if (!fault) return undefined;
    fault.remaining -= 1;
    this.queue = this.queue.filter((f) => f.remaining > 0);
    return fault;
  }
}

export interface RequestRecord {
  method: string;
  path: string;
  status: number;
  at: number;
}

/** Every API request the sandbox answered (admin calls excluded), for tests to count. */
export class RequestLog {
  records: RequestRecord[] = [];

  add(record: RequestRecord): void {
    this.records.push(record);
  }

  clear(): void {
    this.records = [];
  }

  /** Counts by "METHOD /path" (query string dropped). */
  byPath(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.records) {
      const key = `${r.method} ${r.path}`;
      out[key] = (out[key] ?? 0) + 1;
    }
    return out;
  }

  count(method: string, pathPart?: string): number {
    return this.records.filter((r) => r.method === method && (!pathPart || r.path.includes(pathPart))).length;
  }
}

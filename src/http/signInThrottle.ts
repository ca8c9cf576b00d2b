/**
 * Limits wrong admin tokens per client: after `limit` failures within `windowMs`, the client's
 * sign-ins are refused (429 with Retry-After) until the oldest of them leaves the window. Kept in
 * this process on the injected clock: it slows guessing, and a worker restart grants no more than
 * one more window's worth.
 */
import type { Clock } from '../util/clock.js';

export interface SignInThrottle {
  /** null when the client may try now, else the seconds to wait. */
  retryAfterSeconds(client: string): number | null;
  failed(client: string): void;
}

/** Clients remembered at most; beyond it the stalest are forgotten (a bound on memory). */
const MAX_CLIENTS = 10_000;

export function createSignInThrottle(clock: Clock, limit = 5, windowMs = 60_000): SignInThrottle {
  const failures = new Map<string, number[]>();
  const recent = (client: string): number[] => {
    const since = clock.now() - windowMs;
    const times = (failures.get(client) ?? []).filter((t) => t > since);
    if (times.length === 0) failures.delete(client);
    else failures.set(client, times);
    return times;
  };
  return {
    retryAfterSeconds(client) {
      const times = recent(client);
      if (times.length < limit) return null;
      return Math.max(1, Math.ceil((times[times.length - limit]! + windowMs - clock.now()) / 1000));
    },
    failed(client) {
      const times = recent(client);
      times.push(clock.now());
      failures.delete(client); // re-inserted last: Map order is then staleness order
      failures.set(client, times.slice(-limit));
      if (failures.size > MAX_CLIENTS) failures.delete(failures.keys().next().value!);
    },
  };
}

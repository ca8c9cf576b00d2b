/**
 * What the sandbox saw, for `GET /_admin/counters`. `maxInAnySecond`/`maxInAnyMinute` are the most
 * ACCEPTED API requests (all keys together) in any 1 s / 60 s span, with the limiter's definition
 * of a span (t - span, t], so a benchmark can show how close a client came to the plan's limits.
 */
export class SpanMax {
  private readonly times: number[] = [];
  private head = 0;
  max = 0;

  constructor(private readonly spanMs: number) {}

  /** Adds an event at `t` (non-decreasing); the largest count ending at an event is the max. */
  add(t: number): void {
    this.times.push(t);
    while (this.head < this.times.length && (this.times[this.head] as number) <= t - this.spanMs) this.head++;
    if (this.head > 1024) {
      this.times.splice(0, this.head);
      this.head = 0;
    }
    this.max = Math.max(this.max, this.times.length - this.head);
  }

  reset(): void {
    this.times.length = 0;
    this.head = 0;
    this.max = 0;
  }
}

export interface WebhookCounters {
  /** HTTP attempts made (first deliveries, retries and replays). */
  sent: number;
  /** Attempts answered 2xx. */
  delivered: number;
  /** Attempts answered non-2xx, timed out or refused. */
  failedAttempts: number;
  /** Deliveries abandoned after the last retry. */
  abandoned: number;
}

export interface CountersSnapshot {
  /** API requests received (under /v1 and unknown paths; not /_admin or signed downloads). */
  requests: number;
  /** Requests that passed auth and the limiter (faulted ones included: they took a slot). */
  accepted: number;
  /** 429s, rate and daily together. */
  rejected429: number;
  /** Accepted requests whose socket was destroyed without an answer. */
  dropped: number;
  byEndpoint: Record<string, number>;
  byStatus: Record<string, number>;
  maxInAnySecond: number;
  maxInAnyMinute: number;
  /** Accepted today for the main API key, as the limiter counts it (not cleared by a counters reset). */
  usedToday: number;
  webhooks: WebhookCounters;
}

export class RequestCounters {
  requests = 0;
  accepted = 0;
  rejected429 = 0;
  dropped = 0;
  byEndpoint: Record<string, number> = {};
  byStatus: Record<string, number> = {};
  readonly webhooks: WebhookCounters = { sent: 0, delivered: 0, failedAttempts: 0, abandoned: 0 };
  private readonly perSecond = new SpanMax(1000);
  private readonly perMinute = new SpanMax(60_000);

  received(endpoint: string): void {
    this.requests++;
    this.byEndpoint[endpoint] = (this.byEndpoint[endpoint] ?? 0) + 1;
  }

  acceptedAt(nowMs: number): void {
    this.accepted++;
    this.perSecond.add(nowMs);
    this.perMinute.add(nowMs);
  }

  answered(status: number): void {
    if (status === 429) this.rejected429++;
    const key = String(status);
    this.byStatus[key] = (this.byStatus[key] ?? 0) + 1;
  }

  snapshot(usedToday: number): CountersSnapshot {
    return {
      requests: this.requests,
      accepted: this.accepted,
      rejected429: this.rejected429,
      dropped: this.dropped,
      byEndpoint: { ...this.byEndpoint },
      byStatus: { ...this.byStatus },
      maxInAnySecond: this.perSecond.max,
      maxInAnyMinute: this.perMinute.max,
      usedToday,
      webhooks: { ...this.webhooks },
    };
  }

  reset(): void {
    this.requests = 0;
    this.accepted = 0;
    this.rejected429 = 0;
    this.dropped = 0;
    this.byEndpoint = {};
    this.byStatus = {};
    Object.assign(this.webhooks, { sent: 0, delivered: 0, failedAttempts: 0, abandoned: 0 });
    this.perSecond.reset();
    this.perMinute.reset();
  }
}

/**
 * Webhook delivery (spec section 6 + CONTRACT.md "Webhooks"): POST of the JSON body with
 * `X-Service-Signature` = lowercase hex HMAC-SHA256 of the raw body bytes. A delivery not answered
 * 2xx within the timeout is retried on the `delaysMs` schedule (the real Service retries for up to
 * 24 h; the sandbox's schedule is short so tests finish).
 */
import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { WebhookCounters } from './counters.js';

export const SIGNATURE_HEADER = 'x-service-signature';
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [200, 1000, 5000];

export function signWebhookBody(body: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

export interface WebhookDispatcherDeps {
  clock: Clock;
  secret: string;
  /** Read at every attempt, so the admin API can move the target at run time. */
  targetUrl: () => string | undefined;
  delaysMs: readonly number[];
  timeoutMs?: number;
  /** First attempts in flight at once (default 1). */
  concurrency?: number;
  counters: WebhookCounters;
  logger?: Logger;
}

export class WebhookDispatcher {
  /** First attempts not yet started, in call order. */
  private queued: { body: string; settle: (ok: Promise<boolean>) => void }[] = [];
  /** First attempts under way. */
  private sending = 0;
  private readonly timers = new Set<unknown>();
  private readonly inFlight = new Set<AbortController>();
  private closed = false;

  constructor(private readonly deps: WebhookDispatcherDeps) {}

  /**
   * Starts delivering `body`. First attempts start in call order, at most `concurrency` at once,
   * each as soon as any earlier one has finished (a receiver still sees retries and replays out of
   * order); resolves with the first attempt's success. A slow delivery holds up only its sender,
   * never the deliveries after it while other senders are free.
   */
  deliver(body: string): Promise<boolean> {
    return new Promise<boolean>((settle) => {
      this.queued.push({ body, settle });
      this.sendNext();
    });
  }

  private sendNext(): void {
    while (this.sending < Math.max(1, this.deps.concurrency ?? 1)) {
      const next = this.queued.shift();
      if (!next) return;
      this.sending += 1;
      const first = this.attempt(next.body, 0);
      next.settle(first);
      void first
        .catch(() => false)
        .then(() => {
          this.sending -= 1;
          this.sendNext();
        });
    }
  }

  /** Cancels scheduled retries and aborts requests in flight. */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) this.deps.clock.clearTimer(timer);
    this.timers.clear();
    for (const controller of this.inFlight) controller.abort();
  }

  private async attempt(body: string, attemptIndex: number): Promise<boolean> {
    const url = this.deps.targetUrl();
    if (this.closed || !url) return false;
    const { counters } = this.deps;
    counters.sent++;
    const ok = await this.post(url, body);
    if (ok) {
      counters.delivered++;
      return true;
    }
    counters.failedAttempts++;
    const delay = this.deps.delaysMs[attemptIndex];
    if (delay === undefined || this.closed) {
      counters.abandoned++;
      this.deps.logger?.debug({ attempts: attemptIndex + 1 }, 'webhook delivery abandoned');
      return false;
    }
    const timer = this.deps.clock.setTimer(() => {
      this.timers.delete(timer);
      void this.attempt(body, attemptIndex + 1);
    }, delay);
    this.timers.add(timer);
    return false;
  }

  private async post(url: string, body: string): Promise<boolean> {
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timeout = this.deps.clock.setTimer(
      () => controller.abort(),
      this.deps.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
    );
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signWebhookBody(body, this.deps.secret),
          'user-agent': 'service-sandbox-webhooks/1',
        },
        body,
        redirect: 'manual',
        signal: controller.signal,
      });
      // Read the answer to the end so the connection can be reused.
      await response.arrayBuffer().catch(() => undefined);
      return response.status >= 200 && response.status < 300;
    } catch (err) {
      this.deps.logger?.debug(
        { err: err instanceof Error ? err.message : String(err) },
        'webhook attempt failed',
      );
      return false;
    } finally {
      this.deps.clock.clearTimer(timeout);
      this.inFlight.delete(controller);
    }
  }
}

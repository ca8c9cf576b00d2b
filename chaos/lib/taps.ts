/**
 * Moments in the worker's work, seen from the sandboxes that run in this process: a webhook being
 * delivered to it, a HubSpot batch write arriving, a follow-up generation request, a poll page. A
 * scenario arms an action (kill -9) for the next such moment, and it runs synchronously while
 * the worker's request is still open, so the kill lands in the middle of that piece of work.
 */
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';

export const MOMENTS = ['webhook-intake', 'crm-batch-write', 'followup-generation', 'poll-page'] as const;
export type Moment = (typeof MOMENTS)[number];

/** Which moment an incoming request is, if any. */
function serviceMoment(endpoint: string): Moment | undefined {
  if (endpoint === 'POST /v1/calls/:id/followups') return 'followup-generation';
  if (endpoint === 'GET /v1/calls') return 'poll-page';
  return undefined;
}

function hubspotMoment(path: string): Moment | undefined {
  return /\/batch\/(upsert|create|update)$/.test(path) && !path.includes('/search')
    ? 'crm-batch-write'
    : undefined;
}

export class MomentTaps {
  private readonly armed = new Map<Moment, () => void>();
  /** How often each moment happened (armed or not). */
  readonly seen: Record<Moment, number> = {
    'webhook-intake': 0,
    'crm-batch-write': 0,
    'followup-generation': 0,
    'poll-page': 0,
  };

  constructor(svc: ServiceSandbox, hs: HubSpotSandbox) {
    const counters = svc.state.counters;
    const received = counters.received.bind(counters);
    counters.received = (endpoint: string) => {
      received(endpoint);
      const moment = serviceMoment(endpoint);
      if (moment) this.fire(moment);
    };
    const faults = hs.state.faults;
    const take = faults.take.bind(faults);
    faults.take = (path: string) => {
      const moment = hubspotMoment(path);
      if (moment) this.fire(moment);
      return take(path);
    };
    // The dispatcher counts each attempt just before it posts: a kill here meets the webhook in flight.
    const webhooks = counters.webhooks;
    let sent = webhooks.sent;
    Object.defineProperty(webhooks, 'sent', {
      get: () => sent,
      set: (value: number) => {
        if (value > sent) this.fire('webhook-intake');
        sent = value;
      },
      enumerable: true,
    });
  }

  /**
   * Runs `action` at the next `moment`; resolves true when it ran, false when `timeoutMs` passed
   * first (the action is then disarmed and not run).
   */
  next(moment: Moment, action: () => void, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.armed.delete(moment);
        resolve(false);
      }, timeoutMs);
      this.armed.set(moment, () => {
        clearTimeout(timer);
        action();
        resolve(true);
      });
    });
  }

  private fire(moment: Moment): void {
    this.seen[moment]++;
    const action = this.armed.get(moment);
    if (!action) return;
    this.armed.delete(moment);
    // A new request is answered after this runs: the worker that sent it is gone by then.
    action();
  }
}

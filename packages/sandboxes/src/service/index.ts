/**
 * The Service sandbox: a local HTTP server that behaves like the coaching Service as
 * service-api-spec.md and CONTRACT.md describe it, with seeded calls, strict plan limits, signed
 * webhooks, fault injection and an admin API (/_admin). See /work/notes/sandbox-api.md.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { PLAN_PRESETS, type PlanLimits, type PlanName } from './plans.js';
import { systemClock, type Clock } from '../clock.js';
import { createAdminHandler } from './admin.js';
import { createEventEmitter } from './events.js';
import { NO_FAULTS, type FaultSettings } from './faults.js';
import { CallLifecycle } from './lifecycle.js';
import { SlidingWindowLimiter } from './limiter.js';
import type { RetryAfterFormat } from './retryAfter.js';
import { seededRandom, type Random } from './rng.js';
import { seedCalls } from './seed.js';
import { createRequestHandler } from './server.js';
import { SandboxState } from './state.js';
import { DEFAULT_RETRY_DELAYS_MS, WebhookDispatcher } from './webhooks.js';

export { SandboxState } from './state.js';
export { SANDBOX_PARTICIPANTS } from './seed.js';
export { signWebhookBody, SIGNATURE_HEADER } from './webhooks.js';
export type { CountersSnapshot } from './counters.js';
export type { RetryAfterFormat } from './retryAfter.js';
export type * from './types.js';

/** The sandbox's stand-in for an enterprise plan's custom numbers when no `limits` are given. */
export const SANDBOX_ENTERPRISE_LIMITS: PlanLimits = {
  ratePerMinute: 600,
  burstPerSecond: 50,
  dailyCap: null,
};

export interface ServiceSandboxOptions {
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 'sales'; limits from PLAN_PRESETS (enterprise: SANDBOX_ENTERPRISE_LIMITS). */
  plan?: PlanName;
  /** Overrides the plan (custom plans, e.g. 600/min, 50/s). */
  limits?: PlanLimits;
  /** Default 'sandbox-key'. */
  apiKey?: string;
  /** A second key with read-only scope: its POSTs get 403. Default none. */
  readOnlyApiKey?: string;
  /** Where webhooks go; none = events are recorded but not sent. */
  webhookUrl?: string;
  /** Default 'sandbox-webhook-secret'. */
  webhookSecret?: string;
  /** Default 25 seeded calls (mixed statuses, most analysed). */
  seedCalls?: number;
  /** RNG seed for the seeded data and fault choices. Default 42. */
  seed?: number;
  faults?: Partial<FaultSettings>;
  /** Delivery retry schedule after a failed attempt. Default [200, 1000, 5000]. */
  webhookRetry?: { delaysMs: number[] };
  /** Per-attempt webhook timeout. Default 10 000 ms (CONTRACT.md). */
  webhookTimeoutMs?: number;
  /**
   * First attempts in flight at once (default 1: one after another, in call order). The contract
   * promises unordered delivery, so a real Service may well send several at once.
   */
  webhookConcurrency?: number;
  /** After completion: transcript.ready at once, analysis.ready after this. Default 200. */
  analysisDelayMs?: number;
  /** Retry-After as whole seconds (default, rounded up), an HTTP-date, fractional seconds, or none. */
  retryAfterFormat?: RetryAfterFormat;
  /** Answer /recording with a 302 to a signed /_signed/recording URL. Default false. */
  recordingRedirect?: boolean;
  /** Time source for limits, timestamps and timers. Default the system clock. */
  clock?: Clock;
  /** Random source for fault decisions. Default seeded from `seed`. */
  random?: Random;
  logger?: Logger;
}

export interface ServiceSandbox {
  /** e.g. http://127.0.0.1:PORT (the Service base URL; the API is under /v1). */
  url: string;
  port: number;
  apiKey: string;
  webhookSecret: string;
  /** In-process access to calls, pushed contexts, follow-ups, events, counters and settings. */
  state: SandboxState;
  close(): Promise<void>;
}

export function resolveSandboxLimits(options: Pick<ServiceSandboxOptions, 'plan' | 'limits'>): PlanLimits {
  if (options.limits) return { ...options.limits };
  const plan = options.plan ?? 'sales';
  return plan === 'enterprise' ? { ...SANDBOX_ENTERPRISE_LIMITS } : { ...PLAN_PRESETS[plan] };
}

export async function startServiceSandbox(options: ServiceSandboxOptions = {}): Promise<ServiceSandbox> {
  const clock = options.clock ?? systemClock;
  const seed = options.seed ?? 42;
  const apiKey = options.apiKey ?? 'sandbox-key';
  const webhookSecret = options.webhookSecret ?? 'sandbox-webhook-secret';
  const random = options.random ?? seededRandom(seed ^ 0xfa17);
  const state = new SandboxState(
    {
      faults: { ...NO_FAULTS, ...options.faults },
      webhookUrl: options.webhookUrl,
      retryAfterFormat: options.retryAfterFormat ?? 'seconds',
      recordingRedirect: options.recordingRedirect ?? false,
    },
    new SlidingWindowLimiter(resolveSandboxLimits(options), clock),
  );
  const seeded = seedCalls({ count: options.seedCalls ?? 25, seed, nowMs: clock.now() });
  for (const call of seeded.calls) state.addCall(call);
  for (const [callId, drafts] of seeded.followups) state.addFollowups(callId, drafts);

  const dispatcher = new WebhookDispatcher({
    clock,
    secret: webhookSecret,
    targetUrl: () => state.settings.webhookUrl,
    delaysMs: options.webhookRetry?.delaysMs ?? DEFAULT_RETRY_DELAYS_MS,
    counters: state.counters.webhooks,
    ...(options.webhookTimeoutMs !== undefined && { timeoutMs: options.webhookTimeoutMs }),
    ...(options.webhookConcurrency !== undefined && { concurrency: options.webhookConcurrency }),
    ...(options.logger && { logger: options.logger }),
  });
  const emit = createEventEmitter({ state, clock, dispatcher });
  const lifecycle = new CallLifecycle({
    state,
    clock,
    emit,
    seed,
    analysisDelayMs: options.analysisDelayMs ?? 200,
  });
  const admin = createAdminHandler({ state, lifecycle, dispatcher, random: seededRandom(seed ^ 0x5af1e) });
  const server = createServer(
    createRequestHandler({
      state,
      lifecycle,
      clock,
      seed,
      recordingKey: randomBytes(32),
      apiKey,
      readOnlyApiKey: options.readOnlyApiKey,
      random,
      logger: options.logger,
      admin,
    }),
  );

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    apiKey,
    webhookSecret,
    state,
    close() {
      closing ??= new Promise<void>((resolve) => {
        lifecycle.close();
        dispatcher.close();
        server.close(() => resolve());
        // Keep-alive sockets would hold close() open until they time out.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * The client against the real Service sandbox over HTTP: every endpoint and every error class the
 * sandbox can produce. Sandbox and client share one FakeClock, so Retry-After waits, backoff and the
 * sandbox's sliding windows move together without real waiting.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PlanLimits } from '../../src/budget/plans.js';
import {
  startServiceSandbox,
  type ServiceSandbox,
  type ServiceSandboxOptions,
} from '@crm-sync/sandboxes/service';
import { SlotLapsedError } from '../../src/service/attempts.js';
import { createServiceClient, DEFAULT_MAX_ATTEMPTS, SEND_DEADLINE_MS } from '../../src/service/client.js';
import {
  ServiceBadRequestError,
  ServiceDailyCapError,
  ServiceForbiddenError,
  ServiceNotFoundError,
  ServiceNotReadyError,
  ServiceTransientError,
  ServiceUnauthorizedError,
} from '../../src/service/errors.js';
import { parseWebhookEvent, WEBHOOK_EVENT_TYPES } from '../../src/service/events.js';
import type { ContextBody, ServiceClient, ServiceClientDeps } from '../../src/service/types.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { rejectionOf } from './support/clientFixture.js';
import { PassThroughBudget } from './support/passThroughBudget.js';

const live = { priority: 'live' } as const;
const ROOMY: PlanLimits = { ratePerMinute: 6000, burstPerSecond: 1000, dailyCap: null };

interface Env {
  sandbox: ServiceSandbox;
  clock: FakeClock;
  budget: PassThroughBudget;
  client: ServiceClient;
}
const open: Env[] = [];

async function setup(
  options: ServiceSandboxOptions = {},
  deps: Partial<ServiceClientDeps> = {},
): Promise<Env> {
  const clock = new FakeClock();
  const sandbox = await startServiceSandbox({ limits: ROOMY, clock, seed: 7, ...options });
  const budget = new PassThroughBudget();
  const client = createServiceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    budget,
    clock,
    random: () => 0,
    timeoutMs: 2_000,
    ...deps,
  });
  const env = { sandbox, clock, budget, client };
  open.push(env);
  return env;
}

afterEach(async () => {
  for (const env of open.splice(0)) {
    await env.client.close();
    await env.sandbox.close();
  }
});

const counters = (env: Env) => env.sandbox.state.countersSnapshot();
const callWithStatus = (env: Env, status: string) => {
  const call = env.sandbox.state.calls().find((c) => c.status === status);
  if (!call) throw new Error(`the seeded sandbox has no ${status} call`);
  return call.id;
};

/** Waits until the client (or sandbox) has a timer on the fake clock: the retry wait has begun. */
async function untilTimers(clock: FakeClock, n = 1): Promise<void> {
  await vi.waitFor(() => expect(clock.pending()).toBeGreaterThanOrEqual(n), { interval: 5, timeout: 5_000 });
}

describe('endpoints', () => {
  it('listCalls pages through every call in order, and the last cursor finds calls created later', async () => {
    const env = await setup();
    const ids: string[] = [];
    const pages = [];
    for await (const page of env.client.listCalls({ limit: 10 }, { priority: 'backfill' })) {
      ids.push(...page.calls.map((c) => c.id));
      pages.push(page);
    }
    expect(ids).toEqual(env.sandbox.state.calls().map((c) => c.id));
    expect(pages.map((p) => p.hasMore)).toEqual([true, true, false]);
    const last = pages.at(-1)!;
    expect(last.nextCursor).toEqual(expect.any(String));

    const created = await adminPost<{ id: string }>(env, '/_admin/calls', {
      participant: { name: 'New Person', email: 'new@example.com' },
    });
    const later = await env.client.listCallsPage({ cursor: last.nextCursor }, live);
    expect(later.calls.map((c) => c.id)).toEqual([created.id]);
    expect(later.calls[0]?.status).toBe('in_progress');
  });

  it('listCallsPage filters by status and created_after', async () => {
    const env = await setup();
    const page = await env.client.listCallsPage({ status: 'analyzed', limit: 100 }, live);
    expect(page.calls.length).toBeGreaterThan(0);
    expect(page.calls.every((c) => c.status === 'analyzed')).toBe(true);
    const third = page.calls[2]!;
    const after = await env.client.listCallsPage(
      { status: 'analyzed', createdAfter: third.created_at },
      live,
    );
    expect(after.calls.map((c) => c.id)).toEqual(page.calls.slice(3).map((c) => c.id));
  });

  it('getCall returns the call object as the sandbox holds it', async () => {
    const env = await setup();
    const id = callWithStatus(env, 'analyzed');
    const call = await env.client.getCall(id, live);
    expect(call).toEqual(env.sandbox.state.callJson(id));
    expect(call.scoring?.overall).toEqual(expect.any(Number));
  });

  it('getTranscript and getAnalysis of an analysed call', async () => {
    const env = await setup();
    const id = callWithStatus(env, 'analyzed');
    const transcript = await env.client.getTranscript(id, live);
    expect(transcript.call_id).toBe(id);
    expect(transcript.segments.length).toBeGreaterThan(0);
    const analysis = await env.client.getAnalysis(id, live);
    expect(analysis.call_id).toBe(id);
    expect(analysis.scoring).toEqual(env.sandbox.state.callJson(id)?.scoring);
  });

  it('getRecording streams every byte the sandbox declares', async () => {
    const env = await setup();
    const id = callWithStatus(env, 'analyzed');
    const rec = await env.client.getRecording(id, live);
    expect(rec.contentType).toBe('audio/mpeg');
    let bytes = 0;
    for await (const chunk of rec.body) bytes += (chunk as Buffer).length;
    expect(rec.contentLength).toBeGreaterThan(0);
    expect(bytes).toBe(rec.contentLength);
  });

  it('getRecording follows the 302 to the signed URL (which is not a Service API request)', async () => {
    const env = await setup({ recordingRedirect: true });
    const id = callWithStatus(env, 'analyzed');
    const rec = await env.client.getRecording(id, live);
    let bytes = 0;
    for await (const chunk of rec.body) bytes += (chunk as Buffer).length;
    expect(bytes).toBe(rec.contentLength);
    expect(counters(env).byStatus).toEqual({ '302': 1 });
    expect(env.budget.runs).toHaveLength(1);
  });

  it('getMetrics passes from, to and group_by and returns the object', async () => {
    const env = await setup();
    const metrics = await env.client.getMetrics(
      { from: '2020-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z', groupBy: 'platform' },
      live,
    );
    expect(metrics).toMatchObject({ group_by: 'platform', totals: { calls: 25 } });
  });

  it('pushContext is accepted and stored as sent', async () => {
    const env = await setup();
    const id = callWithStatus(env, 'in_progress');
    const body: ContextBody = {
      source: 'hubspot',
      contact: { email: 'jane@acme.example', lifecyclestage: 'opportunity' },
      company: { name: 'Acme' },
      deals: [{ id: 'd1', name: 'Acme pilot', stage: 'negotiation', amount: 12000, currency: 'EUR' }],
      custom: {},
    };
    await expect(env.client.pushContext(id, body, live)).resolves.toEqual({ status: 'accepted' });
    expect(env.sandbox.state.contexts(id).map((c) => c.body)).toEqual([body]);
  });

  it('generateFollowups returns the drafts the sandbox generated', async () => {
    const env = await setup();
    const id = callWithStatus(env, 'analyzed');
    const before = env.sandbox.state.followups(id).length;
    const drafts = await env.client.generateFollowups(
      id,
      { tone: 'friendly', recipients: ['x@acme.example'] },
      live,
    );
    expect(drafts.length).toBeGreaterThan(0);
    expect(
      env.sandbox.state
        .followups(id)
        .slice(before)
        .map((d) => d.id),
    ).toEqual(drafts.map((d) => d.id));
  });

  it('generateFollowups runs aroundSend inside the granted slot; nothing is sent without it', async () => {
    const env = await setup();
    const id = callWithStatus(env, 'analyzed');
    const before = env.sandbox.state.followups(id).length;
    const seen: { runs: number; made: number }[] = [];
    const aroundSend = <T>(send: () => Promise<T>) => {
      seen.push({ runs: env.budget.runs.length, made: env.sandbox.state.followups(id).length });
      return send();
    };
    await env.client.generateFollowups(id, {}, { ...live, aroundSend });
    expect(seen).toEqual([{ runs: 1, made: before }]);
    const made = env.sandbox.state.followups(id).length;
    expect(made).toBeGreaterThan(before);

    const refused = new Error('claimed elsewhere');
    const refuse = () => Promise.reject(refused);
    await expect(env.client.generateFollowups(id, {}, { ...live, aroundSend: refuse })).rejects.toBe(refused);
    expect(env.budget.runs).toHaveLength(2);
    expect(env.sandbox.state.followups(id)).toHaveLength(made);
  });

  it('generateFollowups does not send once aroundSend outlasts the deadline; each try a new slot', async () => {
    const env = await setup();
    const id = callWithStatus(env, 'analyzed');
    const before = env.sandbox.state.followups(id).length;
    const requests = counters(env).requests;
    // A database that is always too slow: every slot lapses, and the loop gives up in the end.
    const slow = async <T>(send: () => Promise<T>) => {
      await env.clock.advance(SEND_DEADLINE_MS + 1);
      return send();
    };
    const err = await rejectionOf(env.client.generateFollowups(id, {}, { ...live, aroundSend: slow }));
    expect(err).toBeInstanceOf(SlotLapsedError);
    expect(env.budget.runs).toHaveLength(DEFAULT_MAX_ATTEMPTS);
    expect(counters(env).requests).toBe(requests);
    expect(env.sandbox.state.followups(id)).toHaveLength(before);
  });

  it('every webhook event the sandbox emits parses', async () => {
    const env = await setup({ analysisDelayMs: 100 });
    const call = await adminPost<{ id: string }>(env, '/_admin/calls', {});
    await adminPost(env, `/_admin/calls/${call.id}/complete`, {});
    await env.clock.advance(100);
    await env.client.generateFollowups(call.id, {}, live);
    const events = env.sandbox.state.events.map((e) => parseWebhookEvent(JSON.parse(e.body)));
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(WEBHOOK_EVENT_TYPES));
    expect(events.every((e) => e.data.call_id === call.id)).toBe(true);
  });
});

describe('errors', () => {
  it('400: a bad query is a bad request, not retried', async () => {
    const env = await setup();
    const err = await rejectionOf(env.client.listCallsPage({ createdAfter: 'yesterday' }, live));
    expect(err).toBeInstanceOf(ServiceBadRequestError);
    expect((err as ServiceBadRequestError).serviceCode).toBe('invalid_parameter');
    expect(counters(env).requests).toBe(1);
  });

  it('422: an invalid context body is a bad request naming the problem', async () => {
    const env = await setup();
    const body = { source: 'pipedrive' } as unknown as ContextBody;
    const err = await rejectionOf(env.client.pushContext(callWithStatus(env, 'analyzed'), body, live));
    expect(err).toBeInstanceOf(ServiceBadRequestError);
    expect(err.message).toContain('source must be one of');
    expect(counters(env).requests).toBe(1);
  });

  it('401: stops calling the Service until resetAuth', async () => {
    const env = await setup({}, { apiKey: 'rotated-key' });
    const err = await rejectionOf(env.client.listCallsPage({}, live));
    expect(err).toBeInstanceOf(ServiceUnauthorizedError);
    expect(err.message).not.toContain('rotated-key');
    for (let i = 0; i < 3; i++) {
      await expect(env.client.getCall('x', live)).rejects.toBeInstanceOf(ServiceUnauthorizedError);
    }
    expect(counters(env).requests).toBe(1);
    expect(env.client.health().unauthorized).toBe(true);
    env.client.resetAuth();
    await expect(env.client.getMetrics({}, live)).rejects.toBeInstanceOf(ServiceUnauthorizedError);
    expect(counters(env).requests).toBe(2);
  });

  it('403: the read-only key may read but not write; not retried', async () => {
    const env = await setup({ readOnlyApiKey: 'ro-key' }, { apiKey: 'ro-key' });
    const id = callWithStatus(env, 'analyzed');
    await expect(env.client.getCall(id, live)).resolves.toMatchObject({ id });
    const err = await rejectionOf(env.client.pushContext(id, { source: 'salesforce' }, live));
    expect(err).toBeInstanceOf(ServiceForbiddenError);
    expect(counters(env).byStatus).toEqual({ '200': 1, '403': 1 });
    expect(env.client.health().unauthorized).toBe(false);
  });

  it('404: an unknown call, on the call and on its analysis (no extra lookup)', async () => {
    const env = await setup();
    await expect(env.client.getCall('call_nope', live)).rejects.toBeInstanceOf(ServiceNotFoundError);
    await expect(env.client.getAnalysis('call_nope', live)).rejects.toBeInstanceOf(ServiceNotFoundError);
    expect(counters(env).requests).toBe(2);
  });

  it('409: analysis, transcript and recording not ready', async () => {
    const env = await setup();
    const processing = callWithStatus(env, 'processing');
    const scheduled = callWithStatus(env, 'scheduled');
    await expect(env.client.getAnalysis(processing, live)).rejects.toBeInstanceOf(ServiceNotReadyError);
    await expect(env.client.getTranscript(scheduled, live)).rejects.toBeInstanceOf(ServiceNotReadyError);
    await expect(env.client.getRecording(scheduled, live)).rejects.toBeInstanceOf(ServiceNotReadyError);
    expect(counters(env).byStatus).toEqual({ '409': 3 });
  });

  describe('429', () => {
    it.each([
      ['seconds', 1_000],
      ['fractional', 750],
      ['http-date', 750],
      ['none', 1_000],
    ] as const)(
      'Retry-After as %s: the gate pauses, the retry waits, then succeeds',
      async (format, waitMs) => {
        const env = await setup({
          limits: { ratePerMinute: 60, burstPerSecond: 1, dailyCap: null },
          retryAfterFormat: format,
        });
        await env.client.getMetrics({}, live);
        await env.clock.advance(250);
        const second = env.client.getMetrics({}, live);
        await untilTimers(env.clock);
        expect(env.budget.pauses).toEqual([{ ms: waitMs, reason: 'rate', runsBefore: 2 }]);
        await env.clock.advance(waitMs - 1);
        expect(counters(env).requests).toBe(2);
        await env.clock.advance(1);
        await expect(second).resolves.toMatchObject({ totals: expect.any(Object) });
        expect(counters(env)).toMatchObject({ requests: 3, accepted: 2, rejected429: 1, maxInAnySecond: 1 });
        expect(env.budget.runs).toHaveLength(3);
      },
    );
  });

  it('429 daily cap: the gate pauses until midnight UTC and the call fails at once', async () => {
    const env = await setup({ limits: { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 2 } });
    await env.client.getMetrics({}, live);
    await env.client.getMetrics({}, live);
    const err = await rejectionOf(env.client.getMetrics({}, live));
    expect(err).toBeInstanceOf(ServiceDailyCapError);
    const midnight = Date.UTC(2026, 0, 2);
    expect((err as ServiceDailyCapError).resetsAt).toBe(midnight);
    expect(env.budget.pauses).toEqual([{ ms: midnight - env.clock.now(), reason: 'daily', runsBefore: 3 }]);
    expect(counters(env)).toMatchObject({ requests: 3, rejected429: 1 });
  });

  it('5xx: retried after the backoff, then succeeds', async () => {
    const env = await setup({ faults: { errorRate: 1 } });
    const id = callWithStatus(env, 'analyzed');
    const result = env.client.getCall(id, live);
    await untilTimers(env.clock);
    env.sandbox.state.settings.faults.errorRate = 0;
    await env.clock.advance(500);
    await expect(result).resolves.toMatchObject({ id });
    const byStatus = counters(env).byStatus;
    expect(Object.keys(byStatus).filter((s) => s.startsWith('5'))).toHaveLength(1);
    expect(byStatus['200']).toBe(1);
    expect(env.budget.runs).toHaveLength(2);
  });

  it('dropped connection: retried, then succeeds', async () => {
    const env = await setup({ faults: { dropRate: 1 } });
    const result = env.client.getMetrics({}, live);
    await untilTimers(env.clock);
    env.sandbox.state.settings.faults.dropRate = 0;
    await env.clock.advance(500);
    await expect(result).resolves.toMatchObject({ totals: expect.any(Object) });
    expect(counters(env)).toMatchObject({ dropped: 1, accepted: 2 });
  });

  it('timeout: a Service slower than timeoutMs is transient and retried', async () => {
    // Sandbox latency runs on the fake clock: it lasts until the test moves time on.
    const env = await setup({ faults: { latencyMs: 60_000 } }, { timeoutMs: 200 });
    const result = env.client.getMetrics({}, live);
    await untilTimers(env.clock, 2); // the sandbox's latency timer and the client's backoff
    env.sandbox.state.settings.faults.latencyMs = 0;
    await env.clock.advance(500);
    await expect(result).resolves.toMatchObject({ totals: expect.any(Object) });
    expect(counters(env).accepted).toBe(2);
  });

  it('timeout on every attempt ends as ServiceTransientError (timeout)', async () => {
    const env = await setup({ faults: { latencyMs: 60_000 } }, { timeoutMs: 200, maxAttempts: 1 });
    const err = await rejectionOf(env.client.getMetrics({}, live));
    expect(err).toBeInstanceOf(ServiceTransientError);
    expect((err as ServiceTransientError).kind).toBe('timeout');
  });
});

async function adminPost<T = unknown>(env: Env, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${env.sandbox.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

import { describe, expect, it } from 'vitest';
import { register as globalRegistry } from 'prom-client';
import type { BudgetStats } from '../../src/budget/types.js';
import { createMetrics } from '../../src/metrics/metrics.js';

function stats(overrides: Partial<BudgetStats> = {}): BudgetStats {
  return {
    limits: { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 10_000 },
    usedToday: 1234,
    inLastSecond: 3,
    inLastMinute: 41,
    queued: { live: 1, writeback: 5, backfill: 20 },
    pausedUntil: null,
    dailyCapReached: false,
    lapsedSlots: 0,
    ...overrides,
  };
}

describe('createMetrics', () => {
  it('uses its own registry, never the global one, and two instances do not collide', async () => {
    const a = createMetrics({ defaultMetrics: false });
    const b = createMetrics({ defaultMetrics: false });
    a.jobs.inc({ kind: 'context', outcome: 'done' });
    expect(await a.render()).toContain('crmsync_jobs_total{kind="context",outcome="done"} 1');
    expect(await b.render()).not.toContain('crmsync_jobs_total{kind="context"');
    expect(await globalRegistry.metrics()).not.toContain('crmsync_');
  });

  it('includes the default process metrics unless turned off', async () => {
    expect(await createMetrics().render()).toContain('process_cpu_user_seconds_total');
    expect(await createMetrics({ defaultMetrics: false }).render()).not.toContain('process_cpu');
  });

  it('exposes every named metric', async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.serviceRequests.inc({ endpoint: 'getCall', status: '200' });
    m.serviceRequestDuration.observe({ endpoint: 'getCall' }, 0.12);
    m.contextPushLatency.observe(1.5);
    m.crmRequests.inc({ crm: 'hubspot', status: '429' });
    m.webhooksReceived.inc({ type: 'call.started' });
    m.callsRequeued.inc({ state: 'discovered' });
    m.crmCredentialsOk.set({ crm: 'hubspot' }, 0);
    m.dealSignalWrites.inc({ outcome: 'written' });
    const text = await m.render();
    for (const line of [
      'crmsync_service_requests_total{endpoint="getCall",status="200"} 1',
      'crmsync_service_request_duration_seconds_bucket{le="0.25",endpoint="getCall"} 1',
      'crmsync_context_push_latency_seconds_count 1',
      'crmsync_crm_requests_total{crm="hubspot",status="429"} 1',
      'crmsync_webhooks_received_total{type="call.started"} 1',
      'crmsync_calls_requeued_total{state="discovered"} 1',
      'crmsync_crm_credentials_ok{crm="hubspot"} 0',
      'crmsync_deal_signal_writes_total{outcome="written"} 1',
      'crmsync_webhook_rejections_total{reason="too_large"} 0',
      '# TYPE crmsync_budget_used_today gauge',
      '# TYPE crmsync_job_queue_depth gauge',
      '# TYPE crmsync_sync_calls gauge',
    ]) {
      expect(text).toContain(line);
    }
  });

  it('reads the budget gauges from the injected source at scrape time', async () => {
    const m = createMetrics({ defaultMetrics: false });
    let current = stats();
    m.setBudgetStatsSource(() => current);
    let text = await m.render();
    expect(text).toContain('crmsync_budget_used_today 1234');
    expect(text).toContain('crmsync_budget_daily_cap 10000');
    expect(text).toContain('crmsync_budget_queue_depth{priority="backfill"} 20');
    expect(text).toContain('crmsync_budget_window_in_use{window="1s"} 3');
    expect(text).toContain('crmsync_budget_window_in_use{window="60s"} 41');
    expect(text).toContain('crmsync_budget_lapsed_slots_total 0');

    current = stats({ usedToday: 1300, limits: { ratePerMinute: 600, burstPerSecond: 50, dailyCap: null } });
    text = await m.render();
    expect(text).toContain('crmsync_budget_used_today 1300');
    expect(text).toContain('crmsync_budget_daily_cap +Inf');
  });

  it('reads the job queue and sync gauges from async sources, dropping states that vanished', async () => {
    const m = createMetrics({ defaultMetrics: false });
    let rows = [
      { state: 'queued', priority: 'writeback', count: 7 },
      { state: 'running', priority: 'live', count: 1 },
    ];
    m.setJobQueueDepthSource(async () => rows);
    m.setSyncCallsSource(async () => ({ pending: 4, synced: 90 }));
    let text = await m.render();
    expect(text).toContain('crmsync_job_queue_depth{state="queued",priority="writeback"} 7');
    expect(text).toContain('crmsync_job_queue_depth{state="running",priority="live"} 1');
    expect(text).toContain('crmsync_sync_calls{state="synced"} 90');

    rows = [{ state: 'queued', priority: 'writeback', count: 2 }];
    text = await m.render();
    expect(text).toContain('crmsync_job_queue_depth{state="queued",priority="writeback"} 2');
    expect(text).not.toContain('state="running"');
  });

  it('still renders when a source throws, counting the failure', async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.setBudgetStatsSource(() => {
      throw new Error('no budget');
    });
    m.setJobQueueDepthSource(async () => {
      throw new Error('db down');
    });
    m.setSyncCallsSource(async () => ({ synced: 1 }));
    const text = await m.render();
    expect(text).toContain('crmsync_sync_calls{state="synced"} 1');
    // prom-client spells NaN "Nan"; Prometheus parses it (Go's ParseFloat ignores case).
    expect(text).toContain('crmsync_budget_used_today Nan');
    expect(text).not.toMatch(/^crmsync_job_queue_depth\{/m);
    // One budget failure per scrape, however many gauges read it. An async source's failure
    // lands after the counter was read, so it shows from the next scrape.
    const next = await m.render();
    expect(next).toContain('crmsync_metrics_source_errors_total{source="budget"} 2');
    expect(next).toContain('crmsync_metrics_source_errors_total{source="job_queue"} 1');
  });
});

describe('metrics for alerting', () => {
  it('reads the cursor time at scrape time, NaN (prom-client prints Nan) before the first walk or when the source fails', async () => {
    const m = createMetrics({ defaultMetrics: false });
    expect(await m.render()).toContain('crmsync_cursor_updated_timestamp_seconds Nan');
    let updated: Date | null = null;
    m.setCursorUpdatedSource(async () => {
      if (updated === undefined) throw new Error('db down');
      return updated;
    });
    expect(await m.render()).toContain('crmsync_cursor_updated_timestamp_seconds Nan');
    updated = new Date('2026-11-25T10:00:00.500Z');
    expect(await m.render()).toContain(
      `crmsync_cursor_updated_timestamp_seconds ${Date.parse('2026-11-25T10:00:00.500Z') / 1000}`,
    );
    updated = undefined as unknown as null;
    const text = await m.render();
    expect(text).toContain('crmsync_cursor_updated_timestamp_seconds Nan');
    // The error counter is collected before this gauge, so the failure shows in the next scrape.
    expect(await m.render()).toContain('crmsync_metrics_source_errors_total{source="cursor"} 1');
  });

  it('defines the CRM credentials gauge, 1 accepted and 0 rejected, by crm', async () => {
    const m = createMetrics({ defaultMetrics: false });
    m.crmCredentialsOk.set({ crm: 'hubspot' }, 0);
    expect(await m.render()).toContain('crmsync_crm_credentials_ok{crm="hubspot"} 0');
  });
});

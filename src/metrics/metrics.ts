/**
 * The worker's Prometheus metrics, on a registry of their own (never prom-client's global one, so
 * tests and several workers in one process do not collide). Counters and histograms are updated
 * by the code that sees the event; gauges that mirror state held elsewhere (budget, job queue,
 * sync table) are read at scrape time from sources the wiring injects.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BudgetStats, Priority } from '../budget/types.js';
import { PRIORITIES } from '../budget/types.js';
import { DRIFT_CONDITIONS } from '../config/drift.js';

export type WebhookRejectionReason = 'bad_signature' | 'malformed' | 'too_large' | 'invalid_event';
export const WEBHOOK_REJECTION_REASONS: readonly WebhookRejectionReason[] = [
  'bad_signature',
  'malformed',
  'too_large',
  'invalid_event',
];

export interface JobQueueDepth {
  state: string;
  priority: Priority | string;
  count: number;
}

export type BudgetStatsSource = () => BudgetStats;
export type JobQueueDepthSource = () => Promise<JobQueueDepth[]>;
/** Number of synced calls per sync state. */
export type SyncCallsSource = () => Promise<Record<string, number>>;
/** When the poller last saved its cursor into the Service's call list (null before its first walk). */
export type CursorUpdatedSource = () => Promise<Date | null>;
/** The budget forecast: when the daily cap runs out at the current pace, when the backfill finishes. */
export type ForecastSource = () => Promise<{ capRunsOutAt: Date | null; backfillFinishesAt: Date | null }>;

export interface Metrics {
  readonly registry: Registry;
  /** Prometheus text format content type for `render()`. */
  readonly contentType: string;
  /** Every Service request, labelled by endpoint (e.g. `getCall`) and HTTP status (or `error`). */
  readonly serviceRequests: Counter<'endpoint' | 'status'>;
  readonly serviceRequestDuration: Histogram<'endpoint'>;
  readonly jobs: Counter<'kind' | 'outcome'>;
  readonly webhooksReceived: Counter<'type'>;
  readonly webhookRejections: Counter<'reason'>;
  /** From a call's start event to its CRM context accepted by the Service. */
  readonly contextPushLatency: Histogram;
  readonly crmRequests: Counter<'crm' | 'status'>;
  /** Calls found in a working state with no job left, given a new one (src/worker/housekeeping.ts). */
  readonly callsRequeued: Counter<'state'>;
  /** 1 while the CRM accepts the worker's credentials, 0 while it rejects them. */
  readonly crmCredentialsOk: Gauge<'crm'>;
  /** Deals due a deal-signal write, by how it ended (src/pipelines/dealSignals.ts). */
  readonly dealSignalWrites: Counter<'outcome'>;
  /** 1 while a silence or drift condition is raised (src/drift/), by condition. */
  readonly driftWarning: Gauge<'condition'>;
  setBudgetStatsSource(fn: BudgetStatsSource | null): void;
  setJobQueueDepthSource(fn: JobQueueDepthSource | null): void;
  setSyncCallsSource(fn: SyncCallsSource | null): void;
  setCursorUpdatedSource(fn: CursorUpdatedSource | null): void;
  setForecastSource(fn: ForecastSource | null): void;
  /** The exposition text of every metric on the registry. */
  render(): Promise<string>;
}

export interface CreateMetricsOptions {
  /**
   * Node process metrics (CPU, memory, event loop lag, GC) on the same registry, under their
   * standard unprefixed names so stock dashboards work. Default true.
   */
  defaultMetrics?: boolean;
}

export function createMetrics(options: CreateMetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  let budgetSource: BudgetStatsSource | null = null;
  let jobQueueSource: JobQueueDepthSource | null = null;
  let syncCallsSource: SyncCallsSource | null = null;
  let cursorSource: CursorUpdatedSource | null = null;
  let forecastSource: ForecastSource | null = null;

  const sourceErrors = new Counter({
    name: 'crmsync_metrics_source_errors_total',
    help: 'Gauge sources that threw during a scrape; /metrics still answers',
    labelNames: ['source'] as const,
    registers,
  });

  // A failing source must not fail the whole scrape: the failure is counted and the gauge left
  // empty (NaN for the unlabelled ones, where prom-client would otherwise show a misleading 0). The registry collects every metric in the same tick, so one read per scrape serves
  // all four budget gauges; the cached read is dropped at the next microtask.
  let budgetRead: { stats: BudgetStats | null } | null = null;
  function readBudget(): BudgetStats | null {
    if (!budgetSource) return null;
    if (budgetRead) return budgetRead.stats;
    let stats: BudgetStats | null = null;
    try {
      stats = budgetSource();
    } catch {
      sourceErrors.inc({ source: 'budget' });
    }
    budgetRead = { stats };
    queueMicrotask(() => (budgetRead = null));
    return stats;
  }

  const metrics: Metrics = {
    registry,
    contentType: registry.contentType,
    serviceRequests: new Counter({
      name: 'crmsync_service_requests_total',
      help: 'Requests made to the Service API, by endpoint and HTTP status (or "error" when none came)',
      labelNames: ['endpoint', 'status'] as const,
      registers,
    }),
    serviceRequestDuration: new Histogram({
      name: 'crmsync_service_request_duration_seconds',
      help: 'Duration of Service API requests, from send to response headers',
      labelNames: ['endpoint'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    jobs: new Counter({
      name: 'crmsync_jobs_total',
      help: 'Jobs finished, by kind and outcome',
      labelNames: ['kind', 'outcome'] as const,
      registers,
    }),
    webhooksReceived: new Counter({
      name: 'crmsync_webhooks_received_total',
      help: 'Authentic webhook deliveries stored, by event type ("other" for unknown types)',
      labelNames: ['type'] as const,
      registers,
    }),
    webhookRejections: new Counter({
      name: 'crmsync_webhook_rejections_total',
      help: 'Webhook deliveries refused or stored as rejected, by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
    contextPushLatency: new Histogram({
      name: 'crmsync_context_push_latency_seconds',
      help: 'Time from a call starting to its CRM context being accepted by the Service',
      buckets: [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
      registers,
    }),
    crmRequests: new Counter({
      name: 'crmsync_crm_requests_total',
      help: 'Requests made to a CRM, by CRM and HTTP status (or "error")',
      labelNames: ['crm', 'status'] as const,
      registers,
    }),
    callsRequeued: new Counter({
      name: 'crmsync_calls_requeued_total',
      help: 'Calls found in a working state with no queued job and queued again, by the state they were in',
      labelNames: ['state'] as const,
      registers,
    }),
    crmCredentialsOk: new Gauge({
      name: 'crmsync_crm_credentials_ok',
      help: 'Whether the CRM accepts the configured credentials (1) or rejects them (0)',
      labelNames: ['crm'] as const,
      registers,
    }),
    dealSignalWrites: new Counter({
      name: 'crmsync_deal_signal_writes_total',
      help: 'Deals due a deal-signal write, by outcome: written | unchanged (no request) | retry | refused',
      labelNames: ['outcome'] as const,
      registers,
    }),
    driftWarning: new Gauge({
      name: 'crmsync_drift_warning',
      help: 'Whether a silence or drift condition is raised (1) or not (0): webhook_silence, service_behind, no_match_rise',
      labelNames: ['condition'] as const,
      registers,
    }),
    setBudgetStatsSource: (fn) => {
      budgetSource = fn;
    },
    setJobQueueDepthSource: (fn) => {
      jobQueueSource = fn;
    },
    setSyncCallsSource: (fn) => {
      syncCallsSource = fn;
    },
    setCursorUpdatedSource: (fn) => {
      cursorSource = fn;
    },
    setForecastSource: (fn) => {
      forecastSource = fn;
    },
    render: () => registry.metrics(),
  };

  // Zero-initialised so dashboards and alerts see the series before the first event.
  for (const reason of WEBHOOK_REJECTION_REASONS) metrics.webhookRejections.inc({ reason }, 0);
  for (const condition of DRIFT_CONDITIONS) metrics.driftWarning.set({ condition }, 0);

  new Gauge({
    name: 'crmsync_budget_used_today',
    help: 'Service requests started this UTC day, by every process sharing the budget',
    registers,
    collect() {
      this.set(readBudget()?.usedToday ?? Number.NaN);
    },
  });
  new Gauge({
    name: 'crmsync_budget_daily_cap',
    help: 'Service requests allowed per UTC day (+Inf when the plan has no cap)',
    registers,
    collect() {
      const stats = readBudget();
      this.set(stats ? (stats.limits.dailyCap ?? Number.POSITIVE_INFINITY) : Number.NaN);
    },
  });
  new Gauge({
    name: 'crmsync_budget_queue_depth',
    help: 'Requests waiting for a budget slot in this process, by priority',
    labelNames: ['priority'] as const,
    registers,
    collect() {
      this.reset();
      const stats = readBudget();
      if (stats) for (const priority of PRIORITIES) this.set({ priority }, stats.queued[priority]);
    },
  });
  new Gauge({
    name: 'crmsync_budget_window_in_use',
    help: 'Requests started within the sliding window (1s burst, 60s rate)',
    labelNames: ['window'] as const,
    registers,
    collect() {
      this.reset();
      const stats = readBudget();
      if (!stats) return;
      this.set({ window: '1s' }, stats.inLastSecond);
      this.set({ window: '60s' }, stats.inLastMinute);
    },
  });
  new Counter({
    name: 'crmsync_budget_lapsed_slots_total',
    help: 'Budget slots not used because their request started too late for them (a slow ledger or a busy process); each took another slot',
    registers,
    collect() {
      // The budget counts; the counter mirrors it (it only grows, and starts at 0 with the process).
      this.reset();
      const stats = readBudget();
      if (stats) this.inc(stats.lapsedSlots);
    },
  });
  new Gauge({
    name: 'crmsync_job_queue_depth',
    help: 'Jobs in the queue, by state and priority',
    labelNames: ['state', 'priority'] as const,
    registers,
    async collect() {
      this.reset();
      if (!jobQueueSource) return;
      try {
        for (const row of await jobQueueSource()) {
          this.set({ state: row.state, priority: row.priority }, row.count);
        }
      } catch {
        this.reset();
        sourceErrors.inc({ source: 'job_queue' });
      }
    },
  });
  new Gauge({
    name: 'crmsync_sync_calls',
    help: 'Calls known to the sync, by sync state',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      this.reset();
      if (!syncCallsSource) return;
      try {
        for (const [state, count] of Object.entries(await syncCallsSource())) this.set({ state }, count);
      } catch {
        this.reset();
        sourceErrors.inc({ source: 'sync_calls' });
      }
    },
  });

  new Gauge({
    name: 'crmsync_cursor_updated_timestamp_seconds',
    help: "When the poller last saved its cursor into the Service's call list (Unix time); alert on its age",
    registers,
    async collect() {
      if (!cursorSource) return this.set(Number.NaN);
      try {
        const updated = await cursorSource();
        this.set(updated ? updated.getTime() / 1000 : Number.NaN);
      } catch {
        this.set(Number.NaN);
        sourceErrors.inc({ source: 'cursor' });
      }
    },
  });

  // The two forecast gauges read the source each (a few indexed reads per scrape).
  async function readForecast(): Promise<Awaited<ReturnType<ForecastSource>> | null> {
    if (!forecastSource) return null;
    try {
      return await forecastSource();
    } catch {
      sourceErrors.inc({ source: 'forecast' });
      return null;
    }
  }
  new Gauge({
    name: 'crmsync_budget_cap_exhausted_timestamp_seconds',
    help: "When the Service's daily cap runs out at the last minute's pace (Unix time); now once reached; NaN when it lasts the UTC day, is unlimited or idle",
    registers,
    async collect() {
      const at = (await readForecast())?.capRunsOutAt;
      this.set(at ? at.getTime() / 1000 : Number.NaN);
    },
  });
  new Gauge({
    name: 'crmsync_backfill_eta_timestamp_seconds',
    help: "When the calls queued at backfill priority would be synced at the plan's rate and daily cap less the live reserve (Unix time); NaN when none are queued",
    registers,
    async collect() {
      const at = (await readForecast())?.backfillFinishesAt;
      this.set(at ? at.getTime() / 1000 : Number.NaN);
    },
  });

  return metrics;
}

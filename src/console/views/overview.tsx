import { SYNC_STATES } from '../../sync/states.js';
import { count, duration, ago, utc } from '../format.js';
import type { Overview } from '../overview.js';
import { When } from './when.js';
import type { CapProjection } from '../../budget/forecast.js';

const STATE_LABEL: Record<string, string> = {
  discovered: 'Discovered',
  context_pushed: 'Context pushed',
  awaiting_analysis: 'Awaiting analysis',
  writing_back: 'Writing back',
  written_back: 'Written back',
  failed: 'Failed',
  skipped: 'Skipped',
};

export function OverviewBody({ o }: { o: Overview }) {
  const s = o.snapshot;
  const crmUsage = (s.worker?.crm ?? {}) as {
    requests?: number;
    remaining?: number;
    limit?: number;
    rateLimitedUntil?: number;
  };
  return (
    <div class="grid">
      <section class="card wide">
        <h2>Calls by state</h2>
        <table class="numbers" id="calls-by-state">
          <thead>
            <tr>
              <th>State</th>
              <th>Today</th>
              <th>Last 7 days</th>
              <th>All time</th>
            </tr>
          </thead>
          <tbody>
            {SYNC_STATES.map((state) => (
              <tr class={state === 'failed' && (o.calls.all[state] ?? 0) > 0 ? 'bad' : undefined}>
                <td>
                  {state === 'failed' ? (
                    <a href="/console/failures">{STATE_LABEL[state]}</a>
                  ) : (
                    STATE_LABEL[state]
                  )}
                </td>
                <td data-count={`today:${state}`}>{count(o.calls.today[state])}</td>
                <td data-count={`week:${state}`}>{count(o.calls.week[state])}</td>
                <td data-count={`all:${state}`}>{count(o.calls.all[state])}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p class="muted">Today and 7 days count calls by when they happened; times are UTC.</p>
      </section>

      <section class="card wide">
        <h2>Calls written back per hour</h2>
        <HourChart hours={o.writtenPerHour} />
      </section>

      <section class="card">
        <h2>Service budget today</h2>
        <p class="big" data-budget="used">
          {count(s.budget.usedToday)}
          <span class="muted">
            {' '}
            of {s.budget.dailyCap === null ? 'unlimited' : count(s.budget.dailyCap)} requests
          </span>
        </p>
        {s.budget.dailyCap !== null && (
          <meter
            min={0}
            max={s.budget.dailyCap}
            value={s.budget.usedToday}
            high={s.budget.dailyCap * 0.9}
          ></meter>
        )}
        <p data-budget="projection">{projectionText(o.capProjection)}</p>
        {s.forecast?.backfill ? (
          <p data-budget="backfill">
            Backfill: {count(s.forecast.backfill.queuedCalls)} call(s) queued, about{' '}
            {count(s.forecast.backfill.requests)} requests; done by {utc(s.forecast.backfill.finishesAt)}.
          </p>
        ) : null}
        <p class="muted">
          Last minute: {count(s.budget.inLastMinute)} (plan {count(s.budget.plan.ratePerMinute)}/min) · last
          second: {count(s.budget.inLastSecond)}
          {s.budget.pausedUntil ? ` · paused until ${utc(s.budget.pausedUntil)}` : ''}
        </p>
      </section>

      <section class="card">
        <h2>Queue</h2>
        <table class="numbers">
          <tbody>
            {Object.entries(s.jobs.queuedByPriority).map(([priority, n]) => (
              <tr>
                <td>
                  {priority === 'live' ? 'Live calls' : priority === 'writeback' ? 'Write-backs' : 'Backfill'}
                </td>
                <td data-queue={priority}>{count(n)}</td>
              </tr>
            ))}
            <tr>
              <td>Running now</td>
              <td data-queue="running">{count(s.jobs.byState.running)}</td>
            </tr>
          </tbody>
        </table>
      </section>

      <section class="card">
        <h2>Cursor</h2>
        <p data-cursor="summary">
          {s.cursor.lastCallCreatedAt ? (
            <>
              calls up to <When at={s.cursor.lastCallCreatedAt} />
            </>
          ) : (
            // Webhooks may have brought every call so far; the poll has listed none newer.
            'no new call listed by polling yet'
          )}
          , polled {s.cursor.updatedAt ? ago(s.cursor.updatedAt, o.now) : 'never'}
        </p>
        <dl>
          <dt>Lag</dt>
          <dd data-cursor="lag">{duration(o.cursorLagSeconds)}</dd>
        </dl>
        <details>
          <summary class="muted">The Service's list cursor</summary>
          <p class="mono clip" data-cursor="position" title={s.cursor.position ?? undefined}>
            {s.cursor.position ?? 'none yet: the next poll starts from the beginning'}
          </p>
        </details>
      </section>

      <section class="card">
        <h2>Webhooks</h2>
        <p class="big" data-webhook="last">
          {ago(o.lastVerifiedWebhookAt, o.now)}
        </p>
        <p class="muted">since the last webhook with a valid signature</p>
      </section>

      <section class="card">
        <h2>{s.crm === 'hubspot' ? 'HubSpot' : 'Salesforce'} API</h2>
        <dl>
          <dt>Requests by this worker</dt>
          <dd>{count(crmUsage.requests)}</dd>
          <dt>Remaining (as the CRM reports)</dt>
          <dd>
            {crmUsage.remaining === undefined ? 'not reported yet' : count(crmUsage.remaining)}
            {crmUsage.limit !== undefined ? ` of ${count(crmUsage.limit)}` : ''}
          </dd>
          {crmUsage.rateLimitedUntil !== undefined && crmUsage.rateLimitedUntil > o.now.getTime() && (
            <>
              <dt>Rate limited until</dt>
              <dd>{utc(new Date(crmUsage.rateLimitedUntil))}</dd>
            </>
          )}
        </dl>
      </section>
    </div>
  );
}

function projectionText(p: CapProjection): string {
  switch (p.kind) {
    case 'unlimited':
      return 'No daily cap on this plan.';
    case 'reached':
      return 'The daily cap is spent: work waits until midnight UTC.';
    case 'idle':
      return 'No requests in the last minute.';
    case 'lasts_today':
      return 'At the current pace the cap lasts the day.';
    case 'runs_out':
      return `At the current pace the cap runs out at ${utc(p.at)}.`;
  }
}

/** A bar per hour, drawn in SVG (attributes, not inline styles: the CSP allows no inline style). */
function HourChart({ hours }: { hours: { hour: Date; count: number }[] }) {
  const max = Math.max(1, ...hours.map((h) => h.count));
  const total = hours.reduce((a, h) => a + h.count, 0);
  const w = 24;
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${hours.length * w} 110`}
        role="img"
        aria-label={`${total} calls written back in the last 24 hours`}
      >
        {hours.map((h, i) => {
          const height = Math.round((h.count / max) * 90);
          return (
            <g>
              <rect x={i * w + 3} y={95 - height} width={w - 6} height={height} class="bar">
                <title>{`${utc(h.hour)}: ${h.count}`}</title>
              </rect>
              {i % 3 === 0 && (
                <text x={i * w + w / 2} y={108} class="axis">
                  {h.hour.toISOString().slice(11, 13)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption class="muted">
        {total} in the last 24 hours (UTC hours; the last bar is the current hour).
      </figcaption>
    </figure>
  );
}

import type { MatchChoice } from '../../crm/types.js';
import { describeCallDealSignals } from '../../deals/callSignalsText.js';
import type { CallDetail, LandedRecord } from '../callDetail.js';
import { utc } from '../format.js';
import { fixHint } from '../hints.js';
import { historyChange } from '../historyChange.js';
import { ActionForm } from './layout.js';
import { RegenerateBox } from './replayConfirm.js';
import { When } from './when.js';

const KIND_LABEL: Record<LandedRecord['kind'], string> = {
  contact: 'Contact',
  company: 'Company',
  deal: 'Deal',
  activity: 'Activity',
};

export function CallBody({ d, csrf, crmName }: { d: CallDetail; csrf: string; crmName: string }) {
  const s = d.status;
  return (
    <>
      <section class="card wide">
        <p>
          <span class={`pill state-${s.state}`} id="call-state">
            {s.state}
          </span>{' '}
          {s.participantEmail ?? 'no participant email'}
          {s.participantCompany ? ` · ${s.participantCompany}` : ''} · call at <When at={s.callCreatedAt} />
          {s.overallScore !== null ? ` · score ${s.overallScore}` : ''}
        </p>
        {s.lastErrorCode && (
          <div class="error" data-error={s.lastErrorCode}>
            <p>
              <strong class="mono">{s.lastErrorCode}</strong>: {s.lastErrorMessage}
            </p>
            <p class="hint">{fixHint(s.lastErrorCode)}</p>
            {s.nextAttemptAt && (
              <p class="muted">
                Next automatic try <When at={s.nextAttemptAt} />.
              </p>
            )}
          </div>
        )}
        <ActionForm action="/console/replay" csrf={csrf}>
          <input type="hidden" name="callId" value={s.callId} />
          <input type="hidden" name="back" value={`/console/calls/${encodeURIComponent(s.callId)}`} />
          <RegenerateBox />
          <button type="submit">Replay this call</button>
        </ActionForm>
        {d.warnings.length > 0 && (
          <>
            <h2>Warnings</h2>
            <ul class="call-warnings">
              {d.warnings.map((w) => (
                <li>{w}</li>
              ))}
            </ul>
          </>
        )}
      </section>

      <section class="card wide">
        <h2>Context pushed during the call</h2>
        {s.contextPushedAt ? (
          <p>
            Pushed <When at={s.contextPushedAt} />
            {d.contextEvent?.detail ? ` (${d.contextEvent.detail})` : ''}, carrying the {crmName} records
            below.
          </p>
        ) : (
          <p class="muted">No context was pushed for this call.</p>
        )}
      </section>

      <section class="card wide">
        <h2>{crmName} records</h2>
        {d.records.length === 0 ? (
          <p class="muted">The call has not landed on any {crmName} record.</p>
        ) : (
          <table class="list" id="records">
            <thead>
              <tr>
                <th>Record</th>
                <th>Id</th>
                <th>Why this one</th>
              </tr>
            </thead>
            <tbody>
              {d.records.map((r) => (
                <tr data-record={r.kind}>
                  <td>{KIND_LABEL[r.kind]}</td>
                  <td class="mono">
                    {r.url ? (
                      <a href={r.url} target="_blank" rel="noopener noreferrer">
                        {r.id}
                      </a>
                    ) : (
                      r.id
                    )}
                  </td>
                  <td>
                    {r.kind === 'activity' ? 'Written by crm-sync for this call.' : <Why choice={r.why} />}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {s.crmFollowupIds.length > 0 && (
          <p>
            Follow-ups written: <span class="mono">{s.crmFollowupIds.join(', ')}</span>
          </p>
        )}
        <p id="deal-signals" title={d.dealSignals?.writtenAt?.toISOString()}>
          Deal signals: {describeCallDealSignals(d.dealSignals, utc)}
        </p>
      </section>

      <section class="card wide">
        <h2>Timeline</h2>
        <table class="list" id="timeline">
          <thead>
            <tr>
              <th>When (UTC)</th>
              <th>Change</th>
              <th>Detail</th>
            </tr>
          </thead>
          <tbody>
            {d.history.map((e) => (
              <tr>
                <td class="nowrap">
                  <When at={e.at} />
                </td>
                <td class="nowrap">{historyChange(e)}</td>
                <td>{e.detail ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}

function Why({ choice }: { choice: MatchChoice | null }) {
  if (!choice) return <span class="muted">not recorded</span>;
  return (
    <>
      {choice.label && <strong>{choice.label}: </strong>}
      {choice.reason} <span class="muted mono">({choice.rule})</span>
      {choice.rejected.length > 0 && (
        <ul class="rejected">
          {choice.rejected.map((l) => (
            <li>
              Not {l.label} (<span class="mono">{l.id}</span>): {l.reason}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

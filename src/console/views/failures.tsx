import type { FailureGroup } from '../../store/syncStatusQueries.js';
import { count } from '../format.js';
import { fixHint } from '../hints.js';
import { ActionForm } from './layout.js';
import { RegenerateBox } from './replayConfirm.js';
import { When } from './when.js';

export function FailuresBody({ groups, csrf }: { groups: FailureGroup[]; csrf: string }) {
  const total = groups.reduce((a, g) => a + g.count, 0);
  return (
    <>
      {groups.length === 0 ? (
        <p class="good">No failed calls.</p>
      ) : (
        <p>
          {count(total)} failed call{total === 1 ? '' : 's'}, by error code. Fix the cause first, then replay:
          a replay writes each call again without duplicating it in the CRM.
        </p>
      )}
      {groups.map((g) => (
        <section class="card failure" data-code={g.code ?? 'none'}>
          <h2>
            <span class="mono">{g.code ?? 'no code'}</span> <span class="pill bad">{count(g.count)}</span>
          </h2>
          {g.lastMessage && (
            <p class="message">
              Latest message: <span class="mono">{g.lastMessage}</span>
            </p>
          )}
          <p class="hint">{fixHint(g.code)}</p>
          <p class="muted">
            Last failed <When at={g.lastFailedAt} />. Recent:{' '}
            {g.sampleCallIds.map((id, i) => (
              <>
                {i > 0 && ', '}
                <a href={`/console/calls/${encodeURIComponent(id)}`} class="mono">
                  {id}
                </a>
              </>
            ))}
          </p>
          {g.code !== null && (
            <ActionForm action="/console/replay" csrf={csrf}>
              <input type="hidden" name="code" value={g.code} />
              <input type="hidden" name="back" value="/console/failures" />
              <RegenerateBox />
              <button type="submit">
                {g.count === 1 ? 'Replay this call' : `Replay these ${count(g.count)}`}
              </button>
            </ActionForm>
          )}
        </section>
      ))}
      <section class="card">
        <h2>Replay by time window</h2>
        <p class="muted">
          Replays the calls that failed in the window (UTC), optionally only those with one code.
        </p>
        <ActionForm action="/console/replay" csrf={csrf} class="row">
          <input type="hidden" name="back" value="/console/failures" />
          <label>
            From <input type="datetime-local" name="since" required />
          </label>
          <label>
            To <input type="datetime-local" name="until" />
          </label>
          <label>
            Code{' '}
            <select name="code">
              <option value="">any</option>
              {groups
                .filter((g) => g.code !== null)
                .map((g) => (
                  <option value={g.code!}>{g.code}</option>
                ))}
            </select>
          </label>
          <RegenerateBox />
          <button type="submit">Replay window</button>
        </ActionForm>
      </section>
    </>
  );
}

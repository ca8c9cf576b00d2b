import type { SyncStatusRecord } from '../../store/syncStatus/row.js';
import { When } from './when.js';

/** The search form, then its results, or the most recently updated calls before any search. */
export function CallSearchBody({
  query,
  results,
  recent,
}: {
  query: string;
  results: SyncStatusRecord[] | null;
  recent: SyncStatusRecord[];
}) {
  return (
    <>
      <form method="get" action="/console/calls" class="row search">
        <input
          type="search"
          name="q"
          value={query}
          placeholder="Call id, participant email or company"
          aria-label="Search calls"
          autofocus
        />
        <button type="submit">Search</button>
      </form>
      {results !== null &&
        (results.length === 0 ? <p>No call matches “{query}”.</p> : <CallTable calls={results} />)}
      {results === null && (
        <section id="recent-calls">
          <h2>Recently updated calls</h2>
          {recent.length === 0 ? (
            <p class="muted">No calls yet: the worker has not discovered any.</p>
          ) : (
            <>
              <p class="muted">The {recent.length} most recently updated; search to find older ones.</p>
              <CallTable calls={recent} />
            </>
          )}
        </section>
      )}
    </>
  );
}

export function CallTable({ calls }: { calls: SyncStatusRecord[] }) {
  return (
    <table class="list">
      <thead>
        <tr>
          <th>Call</th>
          <th>State</th>
          <th>Participant</th>
          <th>Company</th>
          <th>Call time</th>
          <th>Updated</th>
          <th>Last error</th>
        </tr>
      </thead>
      <tbody>
        {calls.map((c) => (
          <tr>
            <td>
              <a href={`/console/calls/${encodeURIComponent(c.callId)}`} class="mono">
                {c.callId}
              </a>
            </td>
            <td>
              <span class={`pill state-${c.state}`}>{c.state}</span>
            </td>
            <td>{c.participantEmail ?? '–'}</td>
            <td>{c.participantCompany ?? '–'}</td>
            <td>
              <When at={c.callCreatedAt} />
            </td>
            <td data-updated>
              <When at={c.updatedAt} />
            </td>
            <td class="mono">{c.lastErrorCode ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

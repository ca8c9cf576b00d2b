import type { SyncStatusRecord } from '../../store/syncStatusRepo.js';
import { utc } from '../format.js';

export function CallSearchBody({ query, results }: { query: string; results: SyncStatusRecord[] | null }) {
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
            <td>{utc(c.callCreatedAt)}</td>
            <td class="mono">{c.lastErrorCode ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * 25 calls starting at once, against a HubSpot sandbox that enforces HubSpot's search limit (five
 * searches per second, CRM search guide "Limitations"): the worker as a real process pushes every
 * call's context, and the sandbox never has to answer a search 429. The latency target (p95 <= 6 s)
 * is `npm run bench` row 7, which runs the same burst.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCallStartBurst } from '../../bench/worker/callStartBurst.js';
import { scratchPostgres, type BenchDatabase } from '../../bench/worker/databases.js';

let database: BenchDatabase | undefined;

beforeAll(async () => {
  // PostgreSQL when one answers (as in production installs), else the embedded database.
  const pgDb = await scratchPostgres();
  database = 'skipped' in pgDb ? undefined : pgDb;
});
afterAll(() => database?.drop());

describe('HubSpot search limit, end to end', () => {
  it(
    '25 simultaneous call starts all get their context, with 0 search 429s',
    { timeout: 180_000 },
    async () => {
      const r = await runCallStartBurst({
        calls: 25,
        ...(database ? { databaseUrl: database.databaseUrl } : {}),
      });
      const summary = `${r.calls} calls: p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms, ${r.searches} searches of ${r.hubspotRequests} requests`;
      expect(r.latenciesMs, summary).toHaveLength(25);
      expect(r.search429, summary).toBe(0);
      expect(r.all429, summary).toBe(0);
    },
  );
});

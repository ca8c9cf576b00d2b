import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The workspace packages' own tests (packages/sandboxes) run in the same `npm test`.
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and databases; two cores, so keep forks modest.
    pool: 'forks',
    maxWorkers: 2,
    // Sums every HubSpot sandbox's requests by path prefix; a legacy (numbered-version) one fails the run.
    globalSetup: ['test/support/hubspotRequests.globalSetup.ts'],
  },
});

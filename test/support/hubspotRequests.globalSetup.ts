import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { COUNTS_DIR_ENV } from '@crm-sync/sandboxes/hubspot/prefixCounts';
import { formatReport, sumCounts, type RequestsReport } from './hubspotRequests.js';

/**
 * Vitest global setup: every HubSpot sandbox of the run (in any worker process, or a child process
 * such as `crm-sync-sandbox hubspot`, which inherits the environment) writes its request counts to
 * one directory; teardown sums them into test-results/hubspot-requests.json, prints the table, and
 * fails the run when any sandbox saw a numbered-version (legacy) path it did not expect.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(path.join(tmpdir(), 'hubspot-requests-'));
  process.env[COUNTS_DIR_ENV] = dir;
  return () => {
    try {
      reportRequests(dir, 'test-results', (text) => process.stdout.write(`\n${text}\n\n`));
    } catch (e) {
      // Vitest prints a teardown error but keeps exit code 0; the run must fail.
      process.exitCode = 1;
      throw e;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** Writes `outDir/hubspot-requests.json` and prints the table; throws when legacy requests were seen. */
export function reportRequests(dir: string, outDir: string, print: (text: string) => void): RequestsReport {
  const report = sumCounts(dir);
  if (report.sandboxes === 0) return report;
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'hubspot-requests.json'), `${JSON.stringify(report, null, 2)}\n`);
  print(formatReport(report));
  if (report.legacy > 0) {
    throw new Error(
      `HubSpot sandboxes received ${report.legacy} numbered-version (legacy) requests: see ${outDir}/hubspot-requests.json`,
    );
  }
  return report;
}

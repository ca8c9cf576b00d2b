import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { PrefixCountsFile } from '@crm-sync/sandboxes/hubspot/prefixCounts';

export interface RequestsReport {
  /** Requests by path prefix, summed over every sandbox of the run. */
  byPrefix: Record<string, { kind: string; count: number }>;
  /** Numbered-version requests to sandboxes that did not expect them: must be 0. */
  legacy: number;
  /** Numbered-version requests to sandboxes started with `legacyPaths` (tests of that mode). */
  legacyExpected: number;
  sandboxes: number;
}

/** Sums the counts files every HubSpot sandbox of a run wrote (packages/sandboxes/src/hubspot/prefixCounts.ts). */
export function sumCounts(dir: string): RequestsReport {
  const report: RequestsReport = { byPrefix: {}, legacy: 0, legacyExpected: 0, sandboxes: 0 };
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const file = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as PrefixCountsFile;
    report.sandboxes += 1;
    for (const [prefix, { kind, count }] of Object.entries(file.counts)) {
      const entry = (report.byPrefix[prefix] ??= { kind, count: 0 });
      entry.count += count;
      if (kind !== 'legacy') continue;
      if (file.legacyExpected) report.legacyExpected += count;
      else report.legacy += count;
    }
  }
  return report;
}

export function formatReport(r: RequestsReport): string {
  const rows = Object.entries(r.byPrefix).sort(([a], [b]) => a.localeCompare(b));
  const width = Math.max(20, ...rows.map(([p]) => p.length));
  return [
    `HubSpot sandbox requests by path prefix (${r.sandboxes} sandboxes)`,
    `${'prefix'.padEnd(width)}  ${'kind'.padEnd(6)}  count`,
    ...rows.map(([p, e]) => `${p.padEnd(width)}  ${e.kind.padEnd(6)}  ${e.count}`),
    `legacy (numbered-version) requests: ${r.legacy}` +
      (r.legacyExpected > 0 ? ` (+${r.legacyExpected} to sandboxes testing legacyPaths)` : ''),
  ].join('\n');
}

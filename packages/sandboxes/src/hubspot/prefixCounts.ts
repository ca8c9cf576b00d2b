import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { classifyPath } from './versions.js';

/** Environment variable naming the directory each sandbox writes its prefix counts to. */
export const COUNTS_DIR_ENV = 'HUBSPOT_SANDBOX_COUNTS_DIR';

export interface PrefixCountsFile {
  /** Started with `legacyPaths` (a test of legacy behaviour): its legacy requests are expected. */
  legacyExpected: boolean;
  /** Requests by path prefix, e.g. `/crm/objects/2026-09`, `/crm/v3/objects`. */
  counts: Record<string, { kind: 'dated' | 'legacy' | 'other'; count: number }>;
}

/**
 * Every request a sandbox received, by path prefix, over its whole life (a reset keeps them), so a
 * test run can show it used no numbered-version path. With a directory set, the counts are written
 * there on close and at once on each legacy request, so even a sandbox a test never closed reports
 * one (test/support/hubspotRequests.globalSetup.ts sums the files).
 */
export class PrefixCounts {
  readonly counts: PrefixCountsFile['counts'] = {};
  private readonly file: string | undefined;

  constructor(
    private readonly legacyExpected: boolean,
    dir: string | undefined,
    name: string,
  ) {
    this.file = dir ? path.join(dir, `${name}.json`) : undefined;
  }

  add(urlPath: string): ReturnType<typeof classifyPath> {
    const c = classifyPath(urlPath);
    const entry = (this.counts[c.prefix] ??= { kind: c.kind, count: 0 });
    entry.count += 1;
    if (c.kind === 'legacy') this.flush();
    return c;
  }

  get legacy(): number {
    return Object.values(this.counts).reduce((n, e) => n + (e.kind === 'legacy' ? e.count : 0), 0);
  }

  flush(): void {
    if (!this.file) return;
    mkdirSync(path.dirname(this.file), { recursive: true });
    const body: PrefixCountsFile = { legacyExpected: this.legacyExpected, counts: this.counts };
    writeFileSync(this.file, JSON.stringify(body));
  }
}

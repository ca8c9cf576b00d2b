import type { RematchSummary } from '../pipelines/rematch.js';
import { formatTable } from '../util/table.js';

/** rematch's progress line (stderr); a dry run moves nothing, so it says what would move. */
export function formatRematchProgress(
  p: { seen: number; moved: number; failed: number },
  dryRun: boolean | undefined,
): string {
  return `rematch: ${p.seen} calls checked, ${p.moved} ${dryRun ? 'would move' : 'moved'}, ${p.failed} failed`;
}

/** The end of `crm-sync rematch`: the counts, then each moved and failed call with what and why. */
export function formatRematch(s: RematchSummary): string {
  const moved = s.dryRun ? 'would move' : 'moved';
  const lines = [
    formatTable(
      ['outcome', 'calls'],
      [
        [moved, s.moved],
        ['unchanged', s.unchanged],
        ['failed', s.failed],
      ],
    ),
  ];
  if (s.calls.length > 0) {
    lines.push(
      '',
      formatTable(
        ['call', 'outcome', 'change', 'detail'],
        s.calls.map((c) => [c.callId, c.outcome === 'moved' ? moved : 'failed', c.change, c.detail]),
      ),
    );
  }
  if (s.stoppedBy) lines.push('', `Stopped early: ${s.stoppedBy}. Then run rematch again.`);
  if (s.dryRun) lines.push('', 'Dry run: nothing was written. Run without --dry-run to move them.');
  return lines.join('\n');
}

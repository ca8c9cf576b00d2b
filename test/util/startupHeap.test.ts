import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * In a child process of its own, so that the young generation's size is this test's doing: a
 * burst of short-lived allocation (as start-up makes) grows it, and releaseStartupHeap must give
 * it back without leaving `gc` exposed.
 */
function runChild(): {
  before: number;
  after: number;
  result: { heapBeforeBytes: number; heapAfterBytes: number };
  gcExposed: string;
} {
  const script = `
    import v8 from 'node:v8';
    import { releaseStartupHeap } from './src/util/startupHeap.ts';
    const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    let keep = [];
    for (let i = 0; i < 2_000_000; i++) { keep.push({ i, s: 'x'.repeat(i % 64) }); if (keep.length > 200_000) keep = []; }
    const before = young();
    const result = releaseStartupHeap();
    console.log(JSON.stringify({ before, after: young(), result, gcExposed: typeof globalThis.gc }));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as ReturnType<typeof runChild>;
}

describe('releaseStartupHeap', () => {
  it('shrinks the young generation that a burst of allocation grew, and leaves no global gc', () => {
    const { before, after, result, gcExposed } = runChild();
    expect(before).toBeGreaterThan(8 * 2 ** 20);
    expect(after).toBeLessThanOrEqual(before / 4);
    expect(result.heapAfterBytes).toBeLessThan(result.heapBeforeBytes);
    expect(gcExposed).toBe('undefined');
  }, 30_000);
});

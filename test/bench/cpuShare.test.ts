import { describe, expect, it } from 'vitest';
import { matchingMicros } from '../../bench/worker/cpuShare.js';

describe('matchingMicros', () => {
  // root -> http (node:http) -> handler (packages/sandboxes/src/service) -> json (node)
  //      -> worker (src/pipelines)
  const profile = {
    nodes: [
      { id: 1, callFrame: { url: '' }, children: [2, 5] },
      { id: 2, callFrame: { url: 'node:http' }, children: [3] },
      { id: 3, callFrame: { url: 'file:///app/packages/sandboxes/src/service/routes.ts' }, children: [4] },
      { id: 4, callFrame: { url: 'node:internal/json' } },
      { id: 5, callFrame: { url: 'file:///app/src/pipelines/writeback.ts' } },
    ],
    samples: [2, 3, 4, 5, 4],
    timeDeltas: [0, 10, 20, 30, 40],
  };

  it('counts the time of samples with a matching frame anywhere up their stack', () => {
    // Sample i stands for timeDeltas[i + 1]: node 3 (20) and node 4 (30, then 0 for the last).
    expect(matchingMicros(profile, '/packages/sandboxes/')).toBe(50);
  });

  it('counts nothing when no frame matches', () => {
    expect(matchingMicros(profile, '/src/console/')).toBe(0);
  });
});

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';

describe('crm-sync sandbox service', () => {
  it('prints its URL on the first line, serves, and stops cleanly on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'sandbox',
        'service',
        '--port',
        '0',
        '--plan',
        'team',
        '--seed',
        '4',
        '--throttle-rate',
        '0.25',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SANDBOX_SERVICE_STALL_MS: '1234' } },
    );
    try {
      const lines = createInterface({ input: child.stdout });
      const [first] = (await once(lines, 'line')) as [string];
      expect(first).toMatch(
        /^service sandbox listening on http:\/\/127\.0\.0\.1:\d+ \(plan team, api key sandbox-key\)$/,
      );
      const url = /listening on (http:\/\/\S+)/.exec(first)?.[1];
      const res = await fetch(`${url}/v1/calls`, { headers: { authorization: 'Bearer sandbox-key' } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(4);
      // Fault settings come from flags and SANDBOX_SERVICE_* variables.
      const faults = await (await fetch(`${url}/_admin/faults`)).json();
      expect(faults).toMatchObject({ throttleRate: 0.25, stallMs: 1234, errorRate: 0 });
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JS without declarations: it runs before tsx loads.
import { APPLIED_MARKER, reexecWithFlags, WORKER_NODE_FLAGS } from '../../bin/node-flags.js';

interface Plan {
  file: string;
  args: string[];
  env: Record<string, string>;
}
const plan = reexecWithFlags as (input: {
  argv: string[];
  execArgv: string[];
  execPath: string;
  env: Record<string, string | undefined>;
  canExecve: boolean;
}) => Plan | null;

const base = {
  argv: ['/usr/bin/node', '/app/bin/crm-sync.js', 'start', '--drain-seconds', '2'],
  execArgv: [],
  execPath: '/usr/bin/node',
  env: { PATH: '/bin' },
  canExecve: true,
};

describe('the re-exec of bin/crm-sync.js with the worker flags', () => {
  it('restarts `start` with the flags before the script, keeping its arguments and environment', () => {
    expect(plan(base)).toEqual({
      file: '/usr/bin/node',
      args: [
        '/usr/bin/node',
        ...(WORKER_NODE_FLAGS as string[]),
        '/app/bin/crm-sync.js',
        'start',
        '--drain-seconds',
        '2',
      ],
      env: { PATH: '/bin', [APPLIED_MARKER as string]: '1' },
    });
  });

  it('leaves the process as it is when re-executed already, opted out, flagged by the operator, not `start`, or without execve', () => {
    expect(plan({ ...base, env: { [APPLIED_MARKER as string]: '1' } })).toBeNull();
    expect(plan({ ...base, env: { CRM_SYNC_NODE_FLAGS: 'off' } })).toBeNull();
    expect(plan({ ...base, execArgv: ['--max-old-space-size=200'] })).toBeNull();
    expect(plan({ ...base, env: { NODE_OPTIONS: '--v8-pool-size=2' } })).toBeNull();
    expect(plan({ ...base, argv: ['/usr/bin/node', '/app/bin/crm-sync.js', 'status'] })).toBeNull();
    expect(plan({ ...base, argv: ['/usr/bin/node', '/app/bin/crm-sync.js', '--version'] })).toBeNull();
    expect(plan({ ...base, canExecve: false })).toBeNull();
  });

  /**
   * The real binary: a preload (through NODE_OPTIONS, which both process images read) reports
   * each image that gets as far as running the CLI; `start --help` exits before doing anything.
   */
  function images(env: Record<string, string>): { execArgv: string[]; marker: string | null }[] {
    const hook = `process.on('exit', () => process.stderr.write('IMAGE ' + JSON.stringify({ execArgv: process.execArgv, marker: process.env.${APPLIED_MARKER as string} ?? null }) + '\\n'));`;
    const { stdout, stderr } = spawnSync(process.execPath, ['bin/crm-sync.js', 'start', '--help'], {
      encoding: 'utf8',
      env: {
        ...process.env,
        ...env,
        NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(hook)}`,
      },
    });
    expect(stdout).toContain('Run the worker');
    return stderr
      .split('\n')
      .filter((line) => line.startsWith('IMAGE '))
      .map((line) => JSON.parse(line.slice(6)) as { execArgv: string[]; marker: string | null });
  }

  it('runs `crm-sync start` once, with the flags, and not when opted out', () => {
    expect(images({})).toEqual([{ execArgv: WORKER_NODE_FLAGS, marker: '1' }]);
    expect(images({ CRM_SYNC_NODE_FLAGS: 'off' })).toEqual([{ execArgv: [], marker: null }]);
  }, 60_000);
});

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { APPLIED_MARKER, PROCESS_SETUP, reexecWithFlags, type ReexecInput } from '../../src/cli/nodeFlags.js';

const POSTGRES_NODE_FLAGS = PROCESS_SETUP.postgresql.flags;

const REPO_ROOT = path.join(import.meta.dirname, '..', '..');

const base: ReexecInput = {
  argv: ['/usr/bin/node', '/app/bin/crm-sync.js', 'start', '--drain-seconds', '2'],
  execArgv: [],
  execPath: '/usr/bin/node',
  env: { PATH: '/bin' },
  canExecve: true,
  database: 'postgresql',
};

describe('the re-exec of `crm-sync start` set up for its database', () => {
  it('restarts workers with one V8 thread, PostgreSQL ones with a young generation of at most 2 x 16 MB, embedded ones also with one malloc arena and WebAssembly on the baseline compiler only, both with a fixed malloc trim threshold, keeping arguments and environment', () => {
    expect(reexecWithFlags(base)).toEqual({
      file: '/usr/bin/node',
      args: [
        '/usr/bin/node',
        '--v8-pool-size=1',
        '--max-semi-space-size=16',
        '/app/bin/crm-sync.js',
        'start',
        '--drain-seconds',
        '2',
      ],
      env: { PATH: '/bin', MALLOC_TRIM_THRESHOLD_: '131072', [APPLIED_MARKER]: '1' },
    });
    expect(reexecWithFlags({ ...base, database: 'embedded' })).toEqual({
      file: '/usr/bin/node',
      args: [
        '/usr/bin/node',
        '--v8-pool-size=1',
        '--liftoff-only',
        '/app/bin/crm-sync.js',
        'start',
        '--drain-seconds',
        '2',
      ],
      env: { PATH: '/bin', MALLOC_ARENA_MAX: '1', MALLOC_TRIM_THRESHOLD_: '4194304', [APPLIED_MARKER]: '1' },
    });
  });

  it('leaves the process as it is: re-executed already, opted out, set up by the operator, no execve', () => {
    expect(reexecWithFlags({ ...base, env: { [APPLIED_MARKER]: '1' } })).toBeNull();
    expect(reexecWithFlags({ ...base, env: { CRM_SYNC_NODE_FLAGS: 'off' } })).toBeNull();
    expect(reexecWithFlags({ ...base, execArgv: ['--max-old-space-size=200'] })).toBeNull();
    expect(reexecWithFlags({ ...base, env: { NODE_OPTIONS: '--v8-pool-size=2' } })).toBeNull();
    // An inspector (a debugger, the chaos run's memory checks) is opened by the first image.
    expect(reexecWithFlags({ ...base, env: { NODE_OPTIONS: '--inspect=127.0.0.1:0' } })).toBeNull();
    expect(reexecWithFlags({ ...base, database: 'embedded', env: { MALLOC_ARENA_MAX: '4' } })).toBeNull();
    expect(reexecWithFlags({ ...base, env: { MALLOC_TRIM_THRESHOLD_: '0' } })).toBeNull();
    expect(reexecWithFlags({ ...base, env: { GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=0' } })).toBeNull();
    expect(reexecWithFlags({ ...base, canExecve: false })).toBeNull();
  });

  /**
   * The real binary on a PostgreSQL URL nothing listens on: it gets as far as opening the
   * database and exits. A preload (through NODE_OPTIONS, which both process images read) reports
   * each image that exits; the replaced image never does.
   */
  type Image = { execArgv: string[]; marker: string | null; trim: string | null };
  function exitedImages(env: Record<string, string>): Image[] {
    const hook = `process.on('exit', () => process.stderr.write('IMAGE ' + JSON.stringify({ execArgv: process.execArgv, marker: process.env.${APPLIED_MARKER} ?? null, trim: process.env.MALLOC_TRIM_THRESHOLD_ ?? null }) + '\\n'));`;
    const { stderr } = spawnSync(process.execPath, ['bin/crm-sync.js', 'start'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        PATH: process.env.PATH,
        CONFIG_DIR: path.join(REPO_ROOT, 'config'),
        CRM: 'hubspot',
        HUBSPOT_ACCESS_TOKEN: 'pat-test',
        SERVICE_API_BASE_URL: 'http://127.0.0.1:1',
        SERVICE_API_KEY: 'key',
        SERVICE_WEBHOOK_SECRET: 'secret',
        DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/none',
        NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(hook)}`,
        ...env,
      },
    });
    expect(stderr).toMatch(/Cannot reach the PostgreSQL server/);
    return stderr
      .split('\n')
      .filter((line) => line.startsWith('IMAGE '))
      .map((line) => JSON.parse(line.slice(6)) as Image);
  }

  it('runs the worker once, with the flags, and with Node defaults when opted out', () => {
    expect(exitedImages({})).toEqual([{ execArgv: POSTGRES_NODE_FLAGS, marker: '1', trim: '131072' }]);
    expect(exitedImages({ CRM_SYNC_NODE_FLAGS: 'off' })).toEqual([
      { execArgv: [], marker: null, trim: null },
    ]);
  }, 120_000);
});

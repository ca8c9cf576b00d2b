/**
 * How the process of `crm-sync start` is set up for its database (V8 and glibc malloc settings),
 * applied by re-executing it once with process.execve. Each setting's measurements:
 * docs/performance.md, "Node flags of `crm-sync start`".
 */
export const PROCESS_SETUP: Record<Database, { flags: string[]; env: Record<string, string> }> = {
  postgresql: {
    flags: ['--v8-pool-size=1', '--max-semi-space-size=16'],
    env: { MALLOC_TRIM_THRESHOLD_: '131072' },
  },
  embedded: {
    flags: ['--v8-pool-size=1', '--liftoff-only'],
    env: { MALLOC_ARENA_MAX: '1', MALLOC_TRIM_THRESHOLD_: '4194304' },
  },
};
/** Set in the re-executed process: it must not re-execute again. */
export const APPLIED_MARKER = 'CRM_SYNC_NODE_FLAGS_APPLIED';
/** `CRM_SYNC_NODE_FLAGS=off` runs with Node's and glibc's defaults. */
export const OPT_OUT = 'CRM_SYNC_NODE_FLAGS';

type Database = 'embedded' | 'postgresql';

export interface ReexecInput {
  argv: readonly string[];
  execArgv: readonly string[];
  execPath: string;
  env: NodeJS.ProcessEnv;
  canExecve: boolean;
  database: Database;
}

/**
 * The execve arguments that restart this process set up for its database, or null when it should
 * run as it is: already re-executed, opted out, the operator chose (node flags on the command line,
 * which includes tsx's loader, the pool size in NODE_OPTIONS, or any glibc malloc setting in the
 * environment), an inspector asked for in NODE_OPTIONS (the first image would open it and print
 * its address, the second open another), or a Node without process.execve.
 */
export function reexecWithFlags(
  input: ReexecInput,
): { file: string; args: string[]; env: NodeJS.ProcessEnv } | null {
  const { argv, execArgv, execPath, env } = input;
  if (!input.canExecve) return null;
  if (env[APPLIED_MARKER] !== undefined) return null;
  if (/^(off|0|false|no)$/i.test(env[OPT_OUT]?.trim() ?? '')) return null;
  if (execArgv.length > 0 || /--v8-pool-size|--inspect/.test(env.NODE_OPTIONS ?? '')) return null;
  if (Object.keys(env).some((name) => name.startsWith('MALLOC_') || name === 'GLIBC_TUNABLES')) return null;
  const setup = PROCESS_SETUP[input.database];
  return {
    file: execPath,
    args: [execPath, ...setup.flags, ...argv.slice(1)],
    env: { ...env, ...setup.env, [APPLIED_MARKER]: '1' },
  };
}

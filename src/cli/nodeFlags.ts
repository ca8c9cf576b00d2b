/**
 * How the process of `crm-sync start` is set up for its database, applied by re-executing it once
 * (process.execve: same pid, stdio, arguments and environment, so signals and a container's PID 1
 * are unaffected). Measured on the idle compiled worker, with throughput unchanged
 * (docs/performance.md, "Footprint"):
 *
 * - PostgreSQL, --v8-pool-size=1: one V8 background thread instead of four (each keeps its own
 *   malloc arena and compilation buffers): ~30 MB less. Not (yet) on the embedded database, where
 *   the background threads also tier up PGlite's WebAssembly: on a loaded machine the backfill
 *   took ~13 % more CPU and up to 2x the time with one, on a quiet one the same; to be measured again.
 * - Embedded, MALLOC_ARENA_MAX=1: one glibc malloc arena instead of one per thread: ~30 MB less.
 *   Not on PostgreSQL, where it measured ~20 MB more. Read by glibc at process start only, hence
 *   the re-exec.
 */
export const PROCESS_SETUP: Record<Database, { flags: string[]; env: Record<string, string> }> = {
  postgresql: { flags: ['--v8-pool-size=1'], env: {} },
  embedded: { flags: [], env: { MALLOC_ARENA_MAX: '1' } },
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
 * which includes tsx's loader, the pool size in NODE_OPTIONS, or MALLOC_ARENA_MAX), or a Node
 * without process.execve.
 */
export function reexecWithFlags(
  input: ReexecInput,
): { file: string; args: string[]; env: NodeJS.ProcessEnv } | null {
  const { argv, execArgv, execPath, env } = input;
  if (!input.canExecve) return null;
  if (env[APPLIED_MARKER] !== undefined) return null;
  if (/^(off|0|false|no)$/i.test(env[OPT_OUT]?.trim() ?? '')) return null;
  if (execArgv.length > 0 || /--v8-pool-size/.test(env.NODE_OPTIONS ?? '')) return null;
  if (env.MALLOC_ARENA_MAX !== undefined) return null;
  const setup = PROCESS_SETUP[input.database];
  return {
    file: execPath,
    args: [execPath, ...setup.flags, ...argv.slice(1)],
    env: { ...env, ...setup.env, [APPLIED_MARKER]: '1' },
  };
}

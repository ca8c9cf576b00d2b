/**
 * The node flags `crm-sync start` runs with on PostgreSQL, applied by re-executing the process once
 * (process.execve: same pid, stdio, arguments and environment, so signals and a container's PID 1
 * are unaffected).
 *
 * --v8-pool-size=1: one V8 background thread instead of four. Each thread keeps its own malloc
 * arena and compilation buffers; an idle PostgreSQL worker is ~30 MB smaller with one, and its
 * throughput is unchanged. Not on the embedded database: there the background threads tier up
 * PGlite's WebAssembly, and with one the backfill ran ~13 % more CPU and up to 2x slower
 * (docs/performance.md, "Footprint").
 */
export const POSTGRES_NODE_FLAGS = ['--v8-pool-size=1'];
/** Set in the re-executed process: it must not re-execute again. */
export const APPLIED_MARKER = 'CRM_SYNC_NODE_FLAGS_APPLIED';
/** `CRM_SYNC_NODE_FLAGS=off` runs with Node's defaults. */
export const OPT_OUT = 'CRM_SYNC_NODE_FLAGS';

export interface ReexecInput {
  argv: readonly string[];
  execArgv: readonly string[];
  execPath: string;
  env: NodeJS.ProcessEnv;
  canExecve: boolean;
  database: 'embedded' | 'postgresql';
}

/**
 * The execve arguments that restart this process with the flags, or null when it should run as
 * it is: embedded database, already re-executed, opted out, the operator chose node flags
 * (command line, which includes tsx's loader, or the pool size in NODE_OPTIONS), or a Node
 * without process.execve.
 */
export function reexecWithFlags(
  input: ReexecInput,
): { file: string; args: string[]; env: NodeJS.ProcessEnv } | null {
  const { argv, execArgv, execPath, env } = input;
  if (!input.canExecve || input.database !== 'postgresql') return null;
  if (env[APPLIED_MARKER] !== undefined) return null;
  if (/^(off|0|false|no)$/i.test(env[OPT_OUT]?.trim() ?? '')) return null;
  if (execArgv.length > 0 || /--v8-pool-size/.test(env.NODE_OPTIONS ?? '')) return null;
  return {
    file: execPath,
    args: [execPath, ...POSTGRES_NODE_FLAGS, ...argv.slice(1)],
    env: { ...env, [APPLIED_MARKER]: '1' },
  };
}

/**
 * How the process of `crm-sync start` is set up for its database, applied by re-executing it once
 * (process.execve: same pid, stdio, arguments and environment, so signals and a container's PID 1
 * are unaffected). Measured on the idle compiled worker, with throughput unchanged
 * (docs/performance.md, "Footprint"):
 *
 * - Both, --v8-pool-size=1: one V8 background thread instead of four (each keeps its own malloc
 *   arena and compilation buffers): ~30 MB less on PostgreSQL, ~8 MB on the embedded database
 *   (idle 186-190 MB instead of 197), where that thread also tiers up PGlite's WebAssembly: the
 *   no-limit backfill ran 65-66 calls/s with it against 66-70 without (800 calls, quiet machine;
 *   an earlier, loaded machine showed ~13 % more CPU, at a time the backfill was far slower).
 * - Embedded, MALLOC_ARENA_MAX=1: one glibc malloc arena instead of one per thread: ~30 MB less.
 *   Not on PostgreSQL, where it measured ~20 MB more.
 * - Both, a fixed MALLOC_TRIM_THRESHOLD_. Left dynamic, glibc raises its trim and mmap thresholds
 *   (up to 64 and 32 MB) once start-up frees a big buffer, e.g. the query compiler's 3.4 MB
 *   WebAssembly bytes, and from then on keeps that much free memory in its arenas instead of
 *   returning it. Setting the variable fixes both: PostgreSQL idle ~140 -> ~121 MB with glibc's
 *   default 128 KB (CPU per call unchanged); embedded 222 -> ~196 MB with 4 MB, where 128 KB
 *   cost ~10 % more backfill CPU (PGlite's buffers come and go) and 4 MB measured neutral.
 *
 * - Embedded, --liftoff-only: WebAssembly runs on V8's baseline compiler only. Without it, every
 *   start (first or not) peaked at 700-750 MB (VmHWM) for ~3 s while TurboFan compiled the
 *   WebAssembly the worker's first queries ran, for a worker that then idles at ~190 MB: a 512 MB
 *   container could not start it (issue 24). With it the compiled worker's start peaked at
 *   219 MB and reached `listening` in 4.7 s instead of 9-13 (loaded machine). Neither a later
 *   tier-up (--wasm-tiering-budget=100000000), --no-wasm-tier-up nor --no-wasm-inlining lowered
 *   the peak (700-750 MB). The price is PGlite's speed: the no-limit backfill measured ~35 %
 *   slower (docs/performance.md); a deployment that needs the rate uses PostgreSQL, or sets
 *   CRM_SYNC_NODE_FLAGS=off with the memory for it.
 *
 * glibc reads its MALLOC_* variables at process start only, hence the re-exec.
 */
export const PROCESS_SETUP: Record<Database, { flags: string[]; env: Record<string, string> }> = {
  postgresql: { flags: ['--v8-pool-size=1'], env: { MALLOC_TRIM_THRESHOLD_: '131072' } },
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

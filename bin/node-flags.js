// The Node/V8 flags `crm-sync start` runs with, applied by re-executing the process once
// (process.execve: same pid, stdio and environment, so signals and a container's PID 1 are
// unaffected). Plain JS, like node-check.js: it runs before anything else is loaded.
//
// --v8-pool-size=1: one V8 background thread instead of four. Each thread keeps its own malloc
// arena and its own compilation buffers; an idle worker is ~30 MB (PostgreSQL) to ~45 MB
// (embedded) smaller with one, and the worker's throughput is unchanged (docs/performance.md,
// "Footprint"). Only `start`: a short command would pay the second process start for nothing.

export const WORKER_NODE_FLAGS = ['--v8-pool-size=1'];
/** Set in the re-executed process: it must not re-execute again. */
export const APPLIED_MARKER = 'CRM_SYNC_NODE_FLAGS_APPLIED';
/** `CRM_SYNC_NODE_FLAGS=off` runs with Node's defaults. */
export const OPT_OUT = 'CRM_SYNC_NODE_FLAGS';

/**
 * The execve arguments that restart this process with WORKER_NODE_FLAGS, or null when it should
 * run as it is: not `start`, already re-executed, opted out, the operator chose node flags
 * (command line, or the pool size in NODE_OPTIONS), or a Node without process.execve.
 */
export function reexecWithFlags({ argv, execArgv, execPath, env, canExecve }) {
  if (!canExecve) return null;
  if (env[APPLIED_MARKER] !== undefined) return null;
  if (/^(off|0|false|no)$/i.test(env[OPT_OUT] ?? '')) return null;
  if (execArgv.length > 0 || /--v8-pool-size/.test(env.NODE_OPTIONS ?? '')) return null;
  const command = argv.slice(2).find((arg) => !arg.startsWith('-'));
  if (command !== 'start') return null;
  return {
    file: execPath,
    args: [execPath, ...WORKER_NODE_FLAGS, ...argv.slice(1)],
    env: { ...env, [APPLIED_MARKER]: '1' },
  };
}

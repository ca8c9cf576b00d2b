/**
 * The worker as a separate process (`crm-sync start`, started by the e2e harness), with what the
 * chaos runner adds: every process's output saved to a file in the scenario's directory (the
 * secrets scan reads them), kill -9 and restart, and a last-resort kill of whatever is still alive.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  runCli,
  startWorkerProcess,
  type Env,
  type Exit,
  type WorkerEnv,
  type WorkerProcess,
} from '../../test/e2e/harness.js';

/** Running workers and where their output goes. */
const alive = new Map<WorkerProcess, string>();

export interface ChaosWorker extends WorkerProcess {
  /** Where this process's output is written once it exits. */
  logFile: string;
  /** SIGKILL; resolves once the process is gone. */
  kill9(): Promise<Exit>;
  /** SIGTERM and wait (SIGKILL after `timeoutMs`). */
  stop(timeoutMs?: number): Promise<Exit>;
}

let sequence = 0;

/** Starts a worker and resolves once /readyz answers 200; `label` names its log file. */
export async function startChaosWorker(
  env: WorkerEnv,
  options: { dir: string; label: string; readyTimeoutMs?: number },
): Promise<ChaosWorker> {
  const logFile = path.join(options.dir, `${options.label}-${String(++sequence).padStart(3, '0')}.log`);
  let worker: WorkerProcess;
  try {
    worker = await startWorkerProcess(env, options.readyTimeoutMs ?? 60_000);
  } catch (err) {
    writeFileSync(logFile, (err as Error).message);
    throw err;
  }
  alive.set(worker, logFile);
  void worker.exited.then((exit) => {
    alive.delete(worker);
    writeFileSync(logFile, `${worker.output()}\n# exit ${JSON.stringify(exit)}\n`);
  });
  return {
    ...worker,
    logFile,
    kill9() {
      worker.kill('SIGKILL');
      return worker.exited;
    },
    async stop(timeoutMs = 20_000) {
      worker.kill('SIGTERM');
      const timer = setTimeout(() => worker.kill('SIGKILL'), timeoutMs);
      const exit = await worker.exited;
      clearTimeout(timer);
      return exit;
    },
  };
}

/**
 * SIGKILL for every worker still running (a scenario that crashed or ran out of time); their output
 * so far is written at once, since the runner may exit before they do.
 */
export function killAllChildren(): void {
  for (const [worker, logFile] of alive) {
    worker.kill('SIGKILL');
    writeFileSync(logFile, `${worker.output()}\n# killed by the chaos runner\n`);
  }
}

/** Runs the CLI to completion and keeps its output (stdout and stderr) in the scenario's directory. */
export async function runChaosCli(
  args: string[],
  env: Env,
  options: { dir: string; label: string; logLevel?: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const result = await runCli(args, env, { logLevel: options.logLevel ?? 'debug' });
  const file = path.join(options.dir, `cli-${options.label}-${String(++sequence).padStart(3, '0')}.log`);
  writeFileSync(
    file,
    `$ crm-sync ${args.join(' ')}\n# exit ${result.code}\n${result.stdout}\n${result.stderr}\n`,
  );
  return result;
}

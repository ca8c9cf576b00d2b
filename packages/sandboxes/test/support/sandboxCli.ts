import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface SandboxCli {
  /** The URL from the first line the sandbox prints. */
  url: string;
  firstLine: string;
  child: ChildProcess;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** The package's bin, run as `npx crm-sync-sandbox` runs it. */
const BIN = fileURLToPath(new URL('../../bin/crm-sync-sandbox.js', import.meta.url));

/** Runs `crm-sync-sandbox ARGS` as a process and waits for its `listening on URL` line. */
export async function startSandboxCli(args: string[], env: Record<string, string> = {}): Promise<SandboxCli> {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await once(lines, 'line')) as [string];
  const url = /listening on (http:\/\/\S+)/.exec(first)?.[1];
  if (!url) {
    child.kill('SIGKILL');
    throw new Error(`unexpected first line: ${first}`);
  }
  return {
    url,
    firstLine: first,
    child,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

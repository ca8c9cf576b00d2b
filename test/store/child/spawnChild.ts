import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./storeChild.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export type ChildMessage = Record<string, unknown>;

/** A running storeChild.ts process and the JSON lines it has printed. */
export interface StoreChild {
  process: ChildProcess;
  pid: number;
  messages: ChildMessage[];
  /** Resolves with the first message (past or future) matching `match`. */
  waitFor(match: (m: ChildMessage) => boolean, what: string): Promise<ChildMessage>;
  send(line: string): void;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<number | string>;
  kill(): void;
}

export function spawnStoreChild(mode: string, options: Record<string, unknown>): StoreChild {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, mode, JSON.stringify(options)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages: ChildMessage[] = [];
  const waiters: { match: (m: ChildMessage) => boolean; resolve: (m: ChildMessage) => void }[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => {
    let message: ChildMessage;
    try {
      message = JSON.parse(line) as ChildMessage;
    } catch {
      return; // not ours (a library printing)
    }
    messages.push(message);
    for (const w of waiters.splice(0)) {
      if (w.match(message)) w.resolve(message);
      else waiters.push(w);
    }
  });
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return {
    process: child,
    pid: child.pid ?? -1,
    messages,
    send: (line) => child.stdin.write(`${line}\n`),
    kill: () => child.kill('SIGKILL'),
    exited,
    waitFor: (match, what) => {
      const seen = messages.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        // A child that dies before saying it fails the wait, with what it printed.
        void exited.then((code) =>
          reject(
            new Error(
              `child ${mode} exited (${code}) before ${what}; stderr:\n${stderr}\nstdout: ${JSON.stringify(messages)}`,
            ),
          ),
        );
      });
    },
  };
}

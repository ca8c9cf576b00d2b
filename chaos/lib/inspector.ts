/**
 * A worker's memory seen from inside, through the V8 inspector: a full GC on demand and
 * `process.memoryUsage()`. A leak check compares the memory left after garbage collection; without
 * a forced GC it compares how far V8 happened to let garbage pile up. The worker is started with
 * `INSPECT_NODE_OPTIONS`, which opens the inspector on a free port of the loopback interface.
 */
import { WebSocket } from 'node:http';

/** For the worker's environment: the inspector on 127.0.0.1, on a port the OS picks. */
export const INSPECT_NODE_OPTIONS = '--inspect=127.0.0.1:0';

export interface MemoryUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** The inspector's address, from the line Node prints on stderr when it opens it. */
export function inspectorUrl(output: string): string {
  const match = /Debugger listening on (ws:\/\/\S+)/.exec(output);
  if (!match)
    throw new Error('the worker did not open the inspector (started without INSPECT_NODE_OPTIONS?)');
  return match[1]!;
}

export interface Inspector {
  /** A full, compacting GC in the worker. */
  collectGarbage(): Promise<void>;
  memoryUsage(): Promise<MemoryUsage>;
  close(): void;
}

export async function connectInspector(url: string): Promise<Inspector> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)), {
      once: true,
    });
  });
  let nextId = 0;
  const pending = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  socket.addEventListener('message', (ev) => {
    const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const waiter = msg.id === undefined ? undefined : pending.get(msg.id);
    if (!waiter) return; // an event, not an answer
    pending.delete(msg.id!);
    if (msg.error) waiter.reject(new Error(msg.error.message));
    else waiter.resolve(msg.result);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    async collectGarbage() {
      await call('HeapProfiler.collectGarbage');
    },
    async memoryUsage() {
      const answer = (await call('Runtime.evaluate', {
        expression: 'JSON.stringify(process.memoryUsage())',
        returnByValue: true,
      })) as { result: { value: string } };
      return JSON.parse(answer.result.value) as MemoryUsage;
    },
    close: () => socket.close(),
  };
}

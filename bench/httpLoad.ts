/**
 * A lean HTTP/1.1 keep-alive client for load generation: each connection writes one request
 * prepared beforehand (head and body in one buffer, one write) and reads the status line and
 * Content-Length of its answer, nothing more. On a 2-core machine the generator shares the CPU
 * with the server it measures: undici cost 0.175 ms of CPU per request there, this one 0.069
 * with its requests' preparation (docs/performance.md), time the server now gets.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';

export interface LoadRequest {
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** The request as bytes on the wire. */
export function serializeRequest(host: string, request: LoadRequest): Buffer {
  const body = Buffer.from(request.body);
  const head = [
    `${request.method} ${request.path} HTTP/1.1`,
    `host: ${host}`,
    ...Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`),
    `content-length: ${body.length}`,
    '',
    '',
  ].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/** One keep-alive connection: `send` resolves with the answer's status when its body is read. */
export interface LoadConnection {
  send(request: Buffer): Promise<number>;
  close(): void;
}

export function openConnection(port: number): Promise<LoadConnection> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
    let pending: { resolve: (status: number) => void; reject: (err: Error) => void } | null = null;
    let buffered: Buffer = Buffer.alloc(0);
    // A broken answer ends the connection: what follows on it could not be trusted.
    const fail = (err: Error) => {
      socket.destroy();
      buffered = Buffer.alloc(0);
      pending?.reject(err);
      pending = null;
    };
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const headEnd = buffered.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = buffered.subarray(0, headEnd).toString('latin1');
      const status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (!length) return fail(new Error(`answer without content-length: ${head.split('\r\n')[0]}`));
      const end = headEnd + 4 + Number(length[1]);
      if (buffered.length < end) return;
      if (buffered.length > end) return fail(new Error('unexpected bytes after the answer'));
      buffered = Buffer.alloc(0);
      const p = pending;
      pending = null;
      p?.resolve(status);
    });
    socket.on('error', (err) => (pending ? fail(err) : reject(err)));
    socket.on('close', () => fail(new Error('connection closed')));
    socket.once('connect', () =>
      resolve({
        send(request) {
          if (pending) throw new Error('one request at a time per connection');
          return new Promise<number>((res, rej) => {
            pending = { resolve: res, reject: rej };
            socket.write(request);
          });
        },
        close: () => socket.destroy(),
      }),
    );
  });
}

export interface LoadRun {
  /** Latencies (ms) of the answers with `okStatus`, after the warm-up. */
  latencies: number[];
  /** Other answers and transport errors after the warm-up. */
  failures: number;
  /** Requests sent, warm-up included. */
  sent: number;
  elapsedSeconds: number;
}

/**
 * `concurrency` connections, each sending the next request as soon as its last one is answered:
 * for `warmupMs` unrecorded, then for `seconds`.
 */
export async function runClosedLoop(options: {
  port: number;
  concurrency: number;
  warmupMs: number;
  seconds: number;
  okStatus: number;
  /** The n-th request's bytes. */
  request: (n: number) => Buffer;
}): Promise<LoadRun> {
  const connections = await Promise.all(
    Array.from({ length: options.concurrency }, () => openConnection(options.port)),
  );
  let next = 0;
  let failures = 0;
  const latencies: number[] = [];
  async function loop(c: number, until: number, record: boolean): Promise<void> {
    while (performance.now() < until) {
      const request = options.request(next++);
      const started = performance.now();
      let status = 0;
      try {
        status = await connections[c]!.send(request);
      } catch {
        // Counted, and the connection replaced: the run keeps its concurrency.
        if (record) failures++;
        connections[c]!.close();
        connections[c] = await openConnection(options.port);
        continue;
      }
      if (!record) continue;
      if (status === options.okStatus) latencies.push(performance.now() - started);
      else failures++;
    }
  }
  try {
    const warmupEnd = performance.now() + options.warmupMs;
    await Promise.all(connections.map((_, c) => loop(c, warmupEnd, false)));
    const start = performance.now();
    const end = start + options.seconds * 1000;
    await Promise.all(connections.map((_, c) => loop(c, end, true)));
    return { latencies, failures, sent: next, elapsedSeconds: (performance.now() - start) / 1000 };
  } finally {
    for (const c of connections) c.close();
  }
}

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void | Promise<void>;

/**
 * A tiny HTTP server on 127.0.0.1:0 whose answers a test scripts one by one (the last handler
 * repeats). Records every request and counts connections (to see keep-alive at work).
 */
export interface ScriptedServer {
  url: string;
  seen: SeenRequest[];
  connections: number;
  /** Replaces the script. */
  script(...handlers: Handler[]): void;
  close(): Promise<void>;
}

export async function startScriptedServer(...initial: Handler[]): Promise<ScriptedServer> {
  let handlers = initial;
  const sockets = new Set<Socket>();
  const state = {
    seen: [] as SeenRequest[],
    connections: 0,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const index = state.seen.length;
      state.seen.push(seen);
      const handler = handlers[Math.min(index, handlers.length - 1)];
      if (!handler) {
        res.writeHead(500).end();
        return;
      }
      void Promise.resolve(handler(req, res, seen)).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get seen() {
      return state.seen;
    },
    get connections() {
      return state.connections;
    },
    script(...next) {
      handlers = next;
      state.seen.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  } as ScriptedServer;
}

export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };

export const errorBody = (
  status: number,
  code: string,
  message = code,
  headers: Record<string, string> = {},
) => json(status, { error: { code, message } }, headers);

/** Closes the connection without an answer. */
export const drop: Handler = (req) => {
  req.socket.destroy();
};

/** Never answers (until the server closes). */
export const hang: Handler = () => {};

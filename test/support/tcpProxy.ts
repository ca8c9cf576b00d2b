/**
 * A TCP proxy a test controls, to cut a connection (the database's, a sandbox's) without touching
 * the server behind it: the shared PostgreSQL is never restarted. `cut()` destroys every live
 * connection and then refuses new ones (accepted and reset at once, which a client sees as
 * ECONNRESET) or blackholes them (accepted, never answered, until `restore()` ends them).
 */
import net from 'node:net';

export type CutMode = 'refuse' | 'blackhole';

export interface TcpProxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** Connections being forwarded now. */
  readonly liveConnections: number;
  /** Connections accepted in all (forwarded or not): a test can wait for a client to come back. */
  readonly accepted: number;
  cut(mode?: CutMode): void;
  restore(): void;
  isCut(): boolean;
  /** Resolves when the next connection is forwarded (after a restore: the client reconnected). */
  nextForwarded(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const live = new Set<[client: net.Socket, upstream: net.Socket]>();
  const held = new Set<net.Socket>();
  let mode: CutMode | null = null;
  let accepted = 0;
  let waiters: (() => void)[] = [];

  const forward = (client: net.Socket) => {
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    live.add(pair);
    const end = () => {
      live.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.once('connect', () => {
      const ready = waiters;
      waiters = [];
      for (const w of ready) w();
    });
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const server = net.createServer((client) => {
    accepted++;
    client.setNoDelay(true);
    if (mode === 'refuse') {
      client.on('error', () => {});
      client.resetAndDestroy();
    } else if (mode === 'blackhole') {
      held.add(client);
      client.on('error', () => {}).on('close', () => held.delete(client));
    } else {
      forward(client);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    get liveConnections() {
      return live.size;
    },
    get accepted() {
      return accepted;
    },
    cut(how = 'refuse') {
      mode = how;
      // A reset, not a FIN: the client must see the connection die, as when a server goes away.
      for (const pair of live) for (const s of pair) if (!s.destroyed) s.resetAndDestroy();
      live.clear();
    },
    restore() {
      mode = null;
      for (const s of held) s.resetAndDestroy();
      held.clear();
    },
    isCut: () => mode !== null,
    nextForwarded: () => new Promise<void>((resolve) => waiters.push(resolve)),
    async close() {
      mode = 'refuse';
      for (const s of [...[...live].flat(), ...held]) s.destroy();
      live.clear();
      held.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from './tcpProxy.js';

/** An echo server stands for the database: whatever goes through the proxy comes back. */
let echo: net.Server;
let proxy: TcpProxy;

beforeAll(async () => {
  echo = net.createServer((s) => s.on('error', () => {}).pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
  proxy = await startTcpProxy({ host: '127.0.0.1', port: (echo.address() as net.AddressInfo).port });
});

afterAll(async () => {
  await proxy.close();
  await new Promise<void>((r) => echo.close(() => r()));
});

function connect(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(proxy.port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

function roundTrip(s: net.Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    s.once('data', (d) => resolve(d.toString()));
    s.once('error', reject);
    s.write(text);
  });
}

/** How the connection ended: 'reset', 'closed', or the data it got instead. */
function ending(s: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    s.once('data', (d) => resolve(`data:${d.toString()}`));
    s.once('error', (e: NodeJS.ErrnoException) =>
      resolve(e.code === 'ECONNRESET' ? 'reset' : String(e.code)),
    );
    s.once('close', () => resolve('closed'));
  });
}

describe('tcpProxy', () => {
  it('forwards both ways', async () => {
    const s = await connect();
    expect(await roundTrip(s, 'hello')).toBe('hello');
    expect(proxy.liveConnections).toBe(1);
    s.destroy();
  });

  it('cut resets live connections and refuses new ones; restore lets them through again', async () => {
    const before = await connect();
    await roundTrip(before, 'x');
    const ended = ending(before);
    proxy.cut();
    expect(await ended).toBe('reset');
    expect(proxy.liveConnections).toBe(0);

    // The reset may come before or after the client saw its connect succeed.
    const during = await connect().then(ending, (e: NodeJS.ErrnoException) => e.code);
    expect(during).toMatch(/^(reset|ECONNRESET)$/);

    proxy.restore();
    const back = proxy.nextForwarded();
    const after = await connect();
    await back;
    expect(await roundTrip(after, 'again')).toBe('again');
    after.destroy();
  });

  it('blackhole accepts and never answers until restore, which resets the held connections', async () => {
    proxy.cut('blackhole');
    const held = await connect();
    const ended = ending(held);
    held.write('anyone?');
    // The proxy has the bytes but forwards nothing: the echo would answer at once otherwise.
    expect(proxy.liveConnections).toBe(0);
    proxy.restore();
    expect(await ended).toBe('reset');
    const after = await connect();
    expect(await roundTrip(after, 'ok')).toBe('ok');
    after.destroy();
  });
});

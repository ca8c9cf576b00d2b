import type { AddressInfo } from 'node:net';

/**
 * The address the HTTP server actually bound, for the startup line (listenUrl), and a URL this
 * host can use to reach it (localUrl: loopback when bound to every interface).
 */
export function boundAddress(
  address: AddressInfo | string | null,
  fallback: { host: string; port: number },
): { listenUrl: string; localUrl: string; port: number } {
  const host = typeof address === 'object' && address ? address.address : fallback.host;
  const port = typeof address === 'object' && address ? address.port : fallback.port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const anyInterface = host === '0.0.0.0' || host === '::';
  const local = anyInterface ? (host === '::' ? '[::1]' : '127.0.0.1') : hostPart;
  return { listenUrl: `http://${hostPart}:${port}`, localUrl: `http://${local}:${port}`, port };
}

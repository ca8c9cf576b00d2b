import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceSandbox } from '../../src/service/index.js';

/** Limits high enough that endpoint tests never meet the limiter. */
export const ROOMY_LIMITS = { ratePerMinute: 100_000, burstPerSecond: 10_000, dailyCap: null };

export function api(sandbox: ServiceSandbox, path: string, init: RequestInit = {}, key = sandbox.apiKey) {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${key}`);
  if (init.body !== undefined && !headers.has('content-type'))
    headers.set('content-type', 'application/json');
  return fetch(`${sandbox.url}${path}`, { ...init, headers });
}

export async function admin(sandbox: ServiceSandbox, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${sandbox.url}/_admin${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body !== undefined && {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    }),
  });
  if (!res.ok) throw new Error(`admin ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

export interface Received {
  headers: IncomingHttpHeaders;
  raw: Buffer;
  json: { id: string; type: string; created_at: string; data: Record<string, unknown> };
}

/** A webhook receiver on 127.0.0.1 that answers with `statusFor(n)` for its n-th request (0-based). */
export class Receiver {
  readonly received: Received[] = [];
  private waiters: { count: number; resolve: () => void }[] = [];
  private server!: Server;
  url = '';

  constructor(private readonly statusFor: (n: number) => number = () => 200) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const n = this.received.length;
        this.received.push({
          headers: req.headers,
          raw,
          json: JSON.parse(raw.toString('utf8')) as Received['json'],
        });
        res.writeHead(this.statusFor(n)).end();
        this.waiters = this.waiters.filter((w) =>
          this.received.length >= w.count ? (w.resolve(), false) : true,
        );
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  /** Resolves once `count` requests have arrived in total. */
  waitFor(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  types(): string[] {
    return this.received.map((r) => r.json.type);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

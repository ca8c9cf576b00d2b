/**
 * Sits between the Service sandbox's webhook sender and the worker and notes every delivery's
 * answer (event id, status, when), so a scenario can tell which events the worker acknowledged
 * and what it answered while something was broken. Passes the exact bytes and signature on.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  eventId: string | undefined;
  /** HTTP status, or 0 when the worker did not answer (connection error). */
  status: number;
  retryAfter: string | null;
  /** Date.now() when the delivery came in and when its answer was passed back. */
  startedAt: number;
  answeredAt: number;
}

export interface WebhookRelay {
  url: string;
  deliveries: Delivery[];
  close(): Promise<void>;
}

export async function startWebhookRelay(target: () => string): Promise<WebhookRelay> {
  const deliveries: Delivery[] = [];
  const server: Server = createServer((req, res) => {
    const startedAt = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let eventId: string | undefined;
      try {
        eventId = (JSON.parse(body.toString('utf8')) as { id?: string }).id;
      } catch {
        eventId = undefined;
      }
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'x-service-signature', 'user-agent']) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      void fetch(`${target()}/webhooks`, {
        method: 'POST',
        headers,
        body: new Uint8Array(body),
        signal: AbortSignal.timeout(15_000),
      })
        .then(async (answer) => {
          const text = await answer.text();
          const retryAfter = answer.headers.get('retry-after');
          deliveries.push({ eventId, status: answer.status, retryAfter, startedAt, answeredAt: Date.now() });
          res.writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'application/json',
            ...(retryAfter ? { 'retry-after': retryAfter } : {}),
          });
          res.end(text);
        })
        .catch(() => {
          deliveries.push({ eventId, status: 0, retryAfter: null, startedAt, answeredAt: Date.now() });
          res.destroy();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

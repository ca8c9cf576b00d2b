import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { runClosedLoop, serializeRequest } from '../../bench/httpLoad.js';

/** The ack benchmark's load client, against a real HTTP server: what it sends and what it counts. */
describe('the lean load client', () => {
  const app = Fastify();
  const seen: { body: unknown; signature: unknown }[] = [];
  app.post('/hook', async (request, reply) => {
    seen.push({ body: request.body, signature: request.headers['x-sig'] });
    const { n } = request.body as { n: number };
    return reply.code(n % 5 === 4 ? 500 : 202).send({ status: 'accepted' });
  });
  afterEach(async () => {
    await app.close();
  });

  it('sends each prepared request once over keep-alive connections and counts other statuses as failures', async () => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const run = await runClosedLoop({
      port,
      concurrency: 3,
      warmupMs: 0,
      seconds: 0.2,
      okStatus: 202,
      request: (n) =>
        serializeRequest(`127.0.0.1:${port}`, {
          method: 'POST',
          path: '/hook',
          headers: { 'content-type': 'application/json', 'x-sig': `sig-${n}` },
          body: JSON.stringify({ n, text: 'naïve' }),
        }),
    });
    expect(run.sent).toBe(seen.length);
    expect(run.latencies.length + run.failures).toBe(run.sent);
    expect(run.failures).toBe(seen.filter((s) => (s.body as { n: number }).n % 5 === 4).length);
    expect(run.failures).toBeGreaterThan(0);
    expect(seen.map((s) => (s.body as { n: number }).n).sort((a, b) => a - b)).toEqual(
      Array.from({ length: run.sent }, (_, n) => n),
    );
    expect(seen[0]).toEqual({
      body: { n: expect.any(Number), text: 'naïve' },
      signature: expect.stringMatching(/^sig-/),
    });
    // Three connections, reused for every request.
    expect(
      await new Promise<number>((resolve, reject) =>
        app.server.getConnections((e, n) => (e ? reject(e) : resolve(n))),
      ),
    ).toBeLessThanOrEqual(3);
  });
});

import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { runClosedLoop, serializeRequest } from '../../bench/httpLoad.js';

/** The ack benchmark's load client, against a real HTTP server: what it sends and what it counts. */
describe('the lean load client', () => {
  const app = Fastify();
  const seen: { body: unknown; signature: unknown }[] = [];
  let connections = 0;
  app.server.on('connection', () => connections++);
  app.post('/hook', async (request, reply) => {
    seen.push({ body: request.body, signature: request.headers['x-sig'] });
    const { n } = request.body as { n: number };
    // Every 20th request loses its connection before an answer.
    if (n % 20 === 19) return request.raw.socket.destroy();
    return reply
      .code(n % 5 === 4 ? 500 : 202)
      .send({ status: 'accepted', padding: 'x'.repeat(n % 3 ? 10 : 70_000) });
  });
  afterEach(async () => {
    await app.close();
  });

  it('sends each prepared request once over keep-alive connections; other answers and lost connections are failures', async () => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const run = await runClosedLoop({
      port,
      concurrency: 3,
      warmupMs: 0,
      seconds: 0.3,
      okStatus: 202,
      request: (n) =>
        serializeRequest(`127.0.0.1:${port}`, {
          method: 'POST',
          path: '/hook',
          headers: { 'content-type': 'application/json', 'x-sig': `sig-${n}` },
          body: JSON.stringify({ n, text: 'naïve' }),
        }),
    });
    const ns = seen.map((s) => (s.body as { n: number }).n);
    expect(run.sent).toBe(seen.length);
    expect(ns.sort((a, b) => a - b)).toEqual(Array.from({ length: run.sent }, (_, n) => n));
    expect(run.latencies.length + run.failures).toBe(run.sent);
    const lost = ns.filter((n) => n % 20 === 19).length;
    expect(lost).toBeGreaterThan(0);
    expect(run.failures).toBe(ns.filter((n) => n % 5 === 4).length);
    expect(seen.find((s) => (s.body as { n: number }).n === 7)).toEqual({
      body: { n: 7, text: 'naïve' },
      signature: 'sig-7',
    });
    // Three connections, reused; one more for each that was lost.
    expect(connections).toBe(3 + lost);
  });
});

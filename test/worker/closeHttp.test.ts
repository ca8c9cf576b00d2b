import { connect } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/util/clock.js';
import { closeHttp } from '../../src/worker/closeHttp.js';

/**
 * A keep-alive connection that is busy when the worker stops (a webhook being stored) stays open
 * after its answer unless closed: plain close() then waits for the client to drop it, up to the
 * 72 s keep-alive timeout.
 */
describe('closeHttp', () => {
  it('returns soon after the request in flight at close is answered, with the client still connected', async () => {
    const app = Fastify();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    app.post('/webhooks', async () => {
      arrived();
      await released;
      return { ok: true };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    // A raw socket, so nothing on the client side closes the connection.
    const socket = connect(port, '127.0.0.1');
    try {
      let answer = '';
      const answered = new Promise<void>((resolve) =>
        socket.on('data', (chunk: Buffer) => {
          answer += chunk.toString();
          if (answer.includes('{"ok":true}')) resolve();
        }),
      );
      socket.write(
        'POST /webhooks HTTP/1.1\r\nHost: worker\r\nConnection: keep-alive\r\n' +
          'Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      );
      await inFlight;

      // The answer goes out only once the server has begun to close, as in the worker's stop.
      const serverClose = app.server.close.bind(app.server);
      app.server.close = (callback) => {
        const server = serverClose(callback);
        release();
        return server;
      };
      const closed = closeHttp(app, systemClock).then(() => 'closed');
      await answered;
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
      const limit = new Promise((resolve) => setTimeout(() => resolve('still open'), 5_000));
      expect(await Promise.race([closed, limit])).toBe('closed');
    } finally {
      socket.destroy();
      await app.close();
    }
  });
});

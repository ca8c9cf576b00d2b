import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { signWebhookBody } from '../../src/http/signature.js';
import { CURRENT_SECRET, testServer } from './harness.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/**
 * Sends one POST over a raw socket, writing the whole body (waiting for the socket to drain),
 * and resolves with what came back. A server that answers and closes while the body is still
 * arriving makes the writes fail (EPIPE/ECONNRESET) instead.
 */
function rawPost(
  port: number,
  body: Buffer,
  chunk = 64 * 1024,
): Promise<{ response: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let response = '';
    let error: string | undefined;
    socket.on('data', (d) => (response += d.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', () => resolve({ response, error }));
    socket.on('connect', async () => {
      socket.write(
        `POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
          `X-Service-Signature: ${signWebhookBody(body, CURRENT_SECRET)}\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      for (let at = 0; at < body.length && !socket.destroyed; at += chunk) {
        if (!socket.write(body.subarray(at, at + chunk))) {
          await new Promise<void>((r) => {
            socket.once('drain', r);
            socket.once('close', r);
          });
        }
      }
      socket.end();
    });
  });
}

describe('POST /webhooks, an oversized body over real HTTP', () => {
  it('reads the whole oversized body, then answers 413: the sender sees the answer, never a reset', async () => {
    const t = testServer({ maxBodyBytes: 4096 });
    app = t.app;
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    // Far more than the socket buffers hold, so an early close would break the sender's writes.
    const body = Buffer.alloc(8 * 1024 * 1024 - 1, 'x');
    const result = await rawPost(port, body);
    expect(result.error).toBeUndefined();
    expect(result.response).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.response).toContain('WEBHOOK_TOO_LARGE');
    expect(t.inbox.calls).toEqual([]);
  });
});

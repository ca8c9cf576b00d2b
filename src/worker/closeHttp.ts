import type { Server } from 'node:http';
import type { Clock } from '../util/clock.js';

/**
 * Closes the HTTP server. Node closes only the connections idle when close() starts; one busy then
 * (a webhook being stored) stays open afterwards until its client drops it, which can take the
 * whole keep-alive timeout (72 s): sweep idle connections until the close completes.
 */
export async function closeHttp(
  http: { close(): Promise<unknown>; server: Server },
  clock: Clock,
): Promise<void> {
  let closed = false;
  let timer: unknown;
  const sweep = () => {
    http.server.closeIdleConnections();
    if (!closed) timer = clock.setTimer(sweep, 250);
  };
  const closing = http.close();
  timer = clock.setTimer(sweep, 250);
  try {
    await closing;
  } finally {
    closed = true;
    clock.clearTimer(timer);
  }
}

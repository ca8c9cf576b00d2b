import { createLogger } from '../../src/log/logger.js';
import { buildHttpServer } from '../../src/http/server.js';
import { signWebhookBody } from '../../src/http/signature.js';
import type { HttpServerDeps } from '../../src/http/types.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { MemoryInbox } from './fakeInbox.js';

export const CURRENT_SECRET = 'whsec_test_current_5f1c';
export const PREVIOUS_SECRET = 'whsec_test_previous_a9e2';

/** A server with an in-memory inbox, a fake clock and a logger whose lines the test can read. */
export function testServer(overrides: Partial<HttpServerDeps> = {}) {
  const logLines: string[] = [];
  const logger = createLogger({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
  const inbox = new MemoryInbox();
  const metrics = createMetrics({ defaultMetrics: false });
  const clock = new FakeClock();
  const app = buildHttpServer({
    logger,
    webhookSecrets: [CURRENT_SECRET, PREVIOUS_SECRET],
    maxBodyBytes: 4096,
    inbox,
    status: async () => ({ worker: 'ok' }),
    readiness: async () => ({ ready: true, checks: {} }),
    metrics,
    clock,
    ...overrides,
  });
  return { app, inbox, metrics, clock, logLines };
}

export function eventBody(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: 'evt_001',
    type: 'call.started',
    created_at: '2026-01-01T12:00:00Z',
    data: { call_id: 'call_42' },
    ...overrides,
  });
}

export function signedHeaders(body: string | Buffer, secret = CURRENT_SECRET): Record<string, string> {
  return { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, secret) };
}

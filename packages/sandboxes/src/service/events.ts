/**
 * Emitting webhook events: each is kept (with its exact body) in the state's event log, then
 * handed to the dispatcher. The log is what the admin replay re-sends.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { shuffled, type Random } from './rng.js';
import type { SandboxState } from './state.js';
import type { EmittedEvent, EventType, WebhookEvent } from './types.js';
import type { WebhookDispatcher } from './webhooks.js';

export interface EventEmitterDeps {
  state: SandboxState;
  clock: Clock;
  dispatcher: WebhookDispatcher;
}

export type EmitEvent = (type: EventType, data: WebhookEvent['data']) => EmittedEvent;

export function createEventEmitter(deps: EventEmitterDeps): EmitEvent {
  return (type, data) => {
    const event: WebhookEvent = {
      id: `evt_${randomBytes(12).toString('hex')}`,
      type,
      created_at: new Date(deps.clock.now()).toISOString(),
      data,
    };
    const emitted = { event, body: JSON.stringify(event) };
    deps.state.events.push(emitted);
    void deps.dispatcher.deliver(emitted.body);
    return emitted;
  };
}

export interface ReplayRequest {
  callId?: string;
  /** Copies of each event to send (default 1). */
  duplicate?: number;
  shuffle?: boolean;
}

export function parseReplayRequest(body: unknown): ReplayRequest | string {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body must be a JSON object';
  const { callId, duplicate, shuffle } = body as Record<string, unknown>;
  if (callId !== undefined && typeof callId !== 'string') return 'callId must be a string';
  if (
    duplicate !== undefined &&
    (!Number.isInteger(duplicate) || (duplicate as number) < 1 || (duplicate as number) > 100)
  ) {
    return 'duplicate must be an integer from 1 to 100';
  }
  if (shuffle !== undefined && typeof shuffle !== 'boolean') return 'shuffle must be a boolean';
  return {
    ...(callId !== undefined && { callId }),
    ...(duplicate !== undefined && { duplicate: duplicate as number }),
    ...(shuffle !== undefined && { shuffle }),
  };
}

/** The events a replay sends, in sending order. */
export function selectReplay(
  events: readonly EmittedEvent[],
  request: ReplayRequest,
  random: Random,
): EmittedEvent[] {
  const chosen = events.filter(
    (e) => request.callId === undefined || e.event.data.call_id === request.callId,
  );
  const copies = chosen.flatMap((e) => Array.from({ length: request.duplicate ?? 1 }, () => e));
  return request.shuffle ? shuffled(random, copies) : copies;
}

import type { InboxRecord, WebhookInbox } from '../../src/http/types.js';

/** An in-memory inbox that dedups by event id like the real one, and records every call. */
export class MemoryInbox implements WebhookInbox {
  readonly calls: InboxRecord[] = [];
  readonly byId = new Map<string, InboxRecord>();
  /** When set, `store` rejects with it (and records nothing), as a database outage would. */
  failWith: Error | null = null;

  async store(e: InboxRecord): Promise<{ duplicate: boolean }> {
    this.calls.push(e);
    if (this.failWith) throw this.failWith;
    if (e.eventId !== null && this.byId.has(e.eventId)) return { duplicate: true };
    if (e.eventId !== null) this.byId.set(e.eventId, e);
    return { duplicate: false };
  }
}

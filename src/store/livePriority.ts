/**
 * Database work done for a live call goes ahead of bulk work. The job runner's live lane and the
 * webhook inbox's commits run inside `runAsLive`; the embedded database (one connection, which PGlite serves in arrival order)
 * is reached through `prioritise`, which lets at most one top-level query or transaction in at a
 * time and picks live work first. On PostgreSQL the live lane has a small pool of its own
 * (src/store/database.ts) instead.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const live = new AsyncLocalStorage<true>();

export function runAsLive<T>(fn: () => Promise<T>): Promise<T> {
  return live.run(true, fn);
}

export function isLive(): boolean {
  return live.getStore() === true;
}

/** What the PGlite driver adapter calls on its client outside a transaction. */
interface Serialised {
  query(...args: never[]): Promise<unknown>;
  transaction(...args: never[]): Promise<unknown>;
}

/**
 * `client` with its top-level `query` and `transaction` queued by priority: live first, else in
 * arrival order. Queries inside a transaction go to the transaction's own handle, untouched.
 */
export function prioritise<C extends Serialised>(client: C): C {
  const waiting = { live: [] as (() => void)[], bulk: [] as (() => void)[] };
  let busy = false;
  const next = () => {
    const go = waiting.live.shift() ?? waiting.bulk.shift();
    busy = go !== undefined;
    // The next query starts after a turn of the event loop: PGlite runs each one on this thread,
    // and handed over at once a queue of them would run back to back in microtasks, reading no
    // request (say, the webhook of a live call) until the queue is empty.
    if (go) setImmediate(go);
  };
  const turn = (): Promise<void> =>
    new Promise((resolve) => {
      if (!busy) {
        busy = true;
        resolve();
      } else (isLive() ? waiting.live : waiting.bulk).push(resolve);
    });
  const queued =
    (fn: (...args: never[]) => Promise<unknown>) =>
    async (...args: never[]) => {
      await turn();
      try {
        return await fn.apply(client, args);
      } finally {
        next();
      }
    };
  const overrides = { query: queued(client.query), transaction: queued(client.transaction) };
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'query' || prop === 'transaction') return overrides[prop];
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Group commit: callers that arrive while a flush is under way wait together and go in the next
 * flush, as one batch. Under load each flush carries many items for the price of one transaction
 * (one commit, one WAL flush); a lone caller is flushed at once, so nothing waits for a timer.
 * Each caller's promise settles only after its own batch's `flush` has settled.
 */
export interface GroupCommit<T, R> {
  submit(item: T): Promise<R>;
}

export interface GroupCommitOptions<T> {
  maxBatch: number;
  /**
   * Flushes under way at once (default 1). With more, a batch forms while others are written
   * (on a pool of connections: one waits on its commit while the next is built). Items with the
   * same `keyOf` never go in two flushes at once, so they still apply in the order submitted.
   */
  maxInFlight?: number;
  keyOf?: (item: T) => string;
}

export function createGroupCommit<T, R>(
  /** Handles one batch; resolves one result per item, in order (or rejects them all). */
  flush: (items: T[]) => Promise<R[]>,
  options: GroupCommitOptions<T>,
): GroupCommit<T, R> {
  type Waiting = {
    item: T;
    key: string | undefined;
    resolve: (r: R) => void;
    reject: (err: unknown) => void;
  };
  const maxInFlight = options.maxInFlight ?? 1;
  let waiting: Waiting[] = [];
  let inFlight = 0;
  /** Keys of the items in flushes under way, with how many of each. */
  const busyKeys = new Map<string, number>();
  let scheduled = false;

  /** Takes up to maxBatch items whose key is in no flush under way, keeping the rest in order. */
  function takeBatch(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const held = new Set<string>();
    for (const w of waiting) {
      const blocked = w.key !== undefined && (busyKeys.has(w.key) || held.has(w.key));
      if (batch.length < options.maxBatch && !blocked) batch.push(w);
      else {
        rest.push(w);
        // A later item of a held-back key must wait behind it.
        if (w.key !== undefined) held.add(w.key);
      }
    }
    waiting = rest;
    return batch;
  }

  async function flushOne(batch: Waiting[]): Promise<void> {
    for (const w of batch) if (w.key !== undefined) busyKeys.set(w.key, (busyKeys.get(w.key) ?? 0) + 1);
    try {
      const results = await flush(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      for (const w of batch) {
        if (w.key === undefined) continue;
        const n = busyKeys.get(w.key)! - 1;
        if (n === 0) busyKeys.delete(w.key);
        else busyKeys.set(w.key, n);
      }
      inFlight--;
      schedule();
    }
  }

  function schedule(): void {
    if (scheduled || inFlight >= maxInFlight || waiting.length === 0) return;
    scheduled = true;
    // One turn of the event loop first: requests already received join this batch. (An
    // in-process database such as PGlite may hold the loop for a whole flush, so without this
    // turn no request would be read while one is written, and every batch would be of one.)
    setImmediate(() => {
      scheduled = false;
      while (inFlight < maxInFlight && waiting.length > 0) {
        const batch = takeBatch();
        if (batch.length === 0) return; // every waiting key is being written: a flush's end reschedules
        inFlight++;
        void flushOne(batch);
      }
    });
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        waiting.push({ item, key: options.keyOf?.(item), resolve, reject });
        schedule();
      });
    },
  };
}

/**
 * Group commit: callers that arrive while a flush is under way wait together and go in the next
 * flush, as one batch. Under load each flush carries many items for the price of one transaction
 * (one commit, one WAL flush); a lone caller is flushed at once, so nothing waits for a timer.
 * Each caller's promise settles only after its own batch's `flush` has settled.
 */
export interface GroupCommit<T, R> {
  submit(item: T): Promise<R>;
}

export function createGroupCommit<T, R>(
  /** Handles one batch; resolves one result per item, in order (or rejects them all). */
  flush: (items: T[]) => Promise<R[]>,
  options: { maxBatch: number },
): GroupCommit<T, R> {
  type Waiting = { item: T; resolve: (r: R) => void; reject: (err: unknown) => void };
  let waiting: Waiting[] = [];
  let flushing = false;

  async function drain(): Promise<void> {
    flushing = true;
    while (waiting.length > 0) {
      // One turn of the event loop first: requests already received join this batch. (An
      // in-process database such as PGlite may hold the loop for a whole flush, so without this
      // turn no request would be read while one is written, and every batch would be of one.)
      await new Promise((resolve) => setImmediate(resolve));
      const batch = waiting.slice(0, options.maxBatch);
      waiting = waiting.slice(batch.length);
      try {
        const results = await flush(batch.map((w) => w.item));
        batch.forEach((w, i) => w.resolve(results[i]!));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    flushing = false;
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        if (!flushing) void drain();
      });
    },
  };
}

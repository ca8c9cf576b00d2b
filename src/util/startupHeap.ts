import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Gives back the V8 heap that start-up grew and no longer uses. Loading the modules, migrating
 * and wiring the worker allocate fast enough that V8 grows the young generation to its maximum
 * (64 MB committed for ~4 MB live) and keeps it; a memory-reducing full GC (V8's "last resort":
 * compacts the old generation and shrinks the young one back to its initial size) returns it, about
 * 30 MB of RSS on an idle worker (docs/performance.md, "Footprint"). The young generation grows
 * again only under sustained allocation, i.e. when the worker is busy, as before.
 *
 * Takes a few hundred milliseconds of one core once; call it when start-up is done, not per request.
 */
export function releaseStartupHeap(): { ms: number; heapBeforeBytes: number; heapAfterBytes: number } {
  const heapBeforeBytes = v8.getHeapStatistics().total_heap_size;
  const started = performance.now();
  const gc = exposedGc();
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return {
    ms: performance.now() - started,
    heapBeforeBytes,
    heapAfterBytes: v8.getHeapStatistics().total_heap_size,
  };
}

type GcFunction = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * V8's gc() without `--expose-gc` on the command line: the flag applies to contexts created after
 * it is set, so a fresh vm context gets the function; the flag is unset again so that no later
 * context (nor the main one) sees a global `gc`.
 */
function exposedGc(): GcFunction {
  v8.setFlagsFromString('--expose-gc');
  try {
    return vm.runInNewContext('gc') as GcFunction;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}

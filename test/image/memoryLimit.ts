/**
 * A memory cgroup for the image test's worker: the runtime stage started as a 512 MB container
 * would be. cgroup v2 (memory.max, memory.peak) or v1 (memory.limit_in_bytes,
 * memory.max_usage_in_bytes), where this process may create one; otherwise the reason, and the
 * test falls back to the worker's own peak (VmHWM). An address-space limit (`prlimit --as`) is no
 * substitute: V8 reserves gigabytes of address space for WebAssembly, and Node does not even
 * start under 1 GB.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface MemoryCgroup {
  /** Prefix for a command line: joins the cgroup, then runs the rest in the same process. */
  launcher: string[];
  /** The most memory the cgroup has held, in bytes (null when the kernel does not say). */
  peakBytes(): number | null;
  /** Removes the cgroup (its processes must have exited). */
  remove(): void;
}

const ROOT = '/sys/fs/cgroup';

export function memoryCgroup(name: string, limitBytes: number): MemoryCgroup | { unavailable: string } {
  const v2 = existsSync(path.join(ROOT, 'cgroup.controllers'));
  const base = v2 ? ROOT : path.join(ROOT, 'memory');
  if (v2 && !readFileSync(path.join(ROOT, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')) {
    return { unavailable: 'cgroup v2 without the memory controller' };
  }
  if (!existsSync(base)) return { unavailable: `no memory cgroup hierarchy at ${base}` };
  const dir = path.join(base, name);
  try {
    mkdirSync(dir);
    writeFileSync(path.join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(limitBytes));
  } catch (err) {
    try {
      rmdirSync(dir);
    } catch {
      // never made
    }
    return { unavailable: `cannot create a memory cgroup at ${dir}: ${(err as Error).message}` };
  }
  const procs = path.join(dir, 'cgroup.procs');
  return {
    launcher: ['sh', '-c', `echo $$ > '${procs}' && exec "$@"`, 'sh'],
    peakBytes: () => {
      try {
        return Number(readFileSync(path.join(dir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes'), 'utf8'));
      } catch {
        return null;
      }
    },
    remove: () => rmdirSync(dir),
  };
}

/** The kernel's high-water mark of a process's RSS (VmHWM), in bytes; null off Linux. */
export function peakRssBytes(pid: number): number | null {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

/**
 * What share of this process's CPU went to code under given paths (the sandboxes), from a CPU
 * profile of the main thread taken while a scenario runs. A sample counts when any frame of its
 * stack is in such a file, so the sandboxes' route handlers and whatever they call (fastify
 * replies, JSON) count as theirs; the HTTP parsing of a request before it reaches a handler does
 * not, so the figure is a lower bound of a few percent at most.
 */
import { Session } from 'node:inspector/promises';

interface ProfileNode {
  id: number;
  callFrame: { url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

export interface CpuShareProbe {
  /** Share (0..1) of the process's CPU time since `start` spent in matching stacks. */
  stop(): Promise<number>;
}

/** Microseconds between samples: coarse enough to cost little, fine enough for a percentage. */
const SAMPLING_INTERVAL_US = 2_000;

export async function startCpuShare(pathMarker: string): Promise<CpuShareProbe> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
  await session.post('Profiler.start');
  const cpu = process.cpuUsage();
  return {
    async stop() {
      const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
      const used = process.cpuUsage(cpu);
      session.disconnect();
      const processUs = used.user + used.system;
      return processUs > 0 ? matchingMicros(profile, pathMarker) / processUs : 0;
    },
  };
}

/** Sampled time (µs) whose stack holds a frame from a file whose URL contains `marker`. */
export function matchingMicros(profile: Profile, marker: string): number {
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const matches = new Map<number, boolean>();
  const inside = (id: number): boolean => {
    const known = matches.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const up = parent.get(id);
    const result = (node?.callFrame.url.includes(marker) ?? false) || (up !== undefined && inside(up));
    matches.set(id, result);
    return result;
  };
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let micros = 0;
  // timeDeltas[i] is the time before sample i; the sample stands for the interval after it.
  for (let i = 0; i < samples.length; i++) if (inside(samples[i]!)) micros += deltas[i + 1] ?? 0;
  return micros;
}

/**
 * Replays a Dockerfile's file-system steps without Docker (CI has no daemon): each stage becomes a
 * directory; COPY copies from the build context (minus .dockerignore) or from an earlier stage;
 * RUN runs in the stage's directory with the current Node first on PATH. RUN steps of the last
 * stage (OS users and directories) are left out. Only the instructions the project's Dockerfile
 * uses are understood; anything else fails loudly rather than being skipped in silence.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface Instruction {
  op: string;
  args: string;
}

export interface Stage {
  name: string;
  instructions: Instruction[];
}

/** Parses a Dockerfile into stages (line continuations joined, comments dropped). */
export function parseDockerfile(text: string): Stage[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  const stages: Stage[] = [];
  for (const line of lines) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const [, op = '', args = ''] = /^(\S+)\s*(.*)$/.exec(trimmed) ?? [];
    if (op.toUpperCase() === 'FROM') {
      const name = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${stages.length}`;
      stages.push({ name, instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`Dockerfile: ${op} before FROM`);
    stage.instructions.push({ op: op.toUpperCase(), args: args.replace(/\s+/g, ' ') });
  }
  return stages;
}

/** A .dockerignore pattern as a RegExp over a context-relative path. */
function ignoreMatcher(context: string): (relative: string) => boolean {
  const file = path.join(context, '.dockerignore');
  const patterns = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#'))
    : [];
  const regexes = patterns.map((p) => {
    const source = p
      .replace(/^\/+|\/+$/g, '')
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*\*\//g, '@@ANY_DIRS@@')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]')
      .replace(/@@ANY_DIRS@@/g, '(?:.*/)?');
    return new RegExp(`^${source}(?:/.*)?$`);
  });
  return (relative) => regexes.some((r) => r.test(relative));
}

export interface ReplayResult {
  /** Directory of each stage, by name. */
  stageDirs: Map<string, string>;
  /** ENV of the last stage. */
  env: Record<string, string>;
  /** ENTRYPOINT + CMD of the last stage, as an argv. */
  command: string[];
}

/** Replays the Dockerfile at `context` into `workDir/<stage>`; `log` receives each step. */
export function replayDockerfile(
  context: string,
  workDir: string,
  log: (step: string) => void,
): ReplayResult {
  const stages = parseDockerfile(readFileSync(path.join(context, 'Dockerfile'), 'utf8'));
  const ignored = ignoreMatcher(context);
  const stageDirs = new Map<string, string>();
  const workdirs = new Map<string, string>();
  const env: Record<string, string> = {};
  let entrypoint: string[] = [];
  let cmd: string[] = [];
  stages.forEach((stage, index) => {
    const last = index === stages.length - 1;
    const dir = path.join(workDir, stage.name);
    mkdirSync(dir, { recursive: true });
    stageDirs.set(stage.name, dir);
    for (const { op, args } of stage.instructions) {
      switch (op) {
        case 'COPY': {
          const from = /^--from=(\S+)\s+/.exec(args);
          const parts = (from ? args.slice(from[0].length) : args).split(' ');
          const destArg = parts.pop()!;
          const root = from ? stageDirs.get(from[1]!) : context;
          if (!root) throw new Error(`COPY --from=${from?.[1]}: no such stage`);
          for (const source of parts) {
            // A path in another stage is absolute in that stage's file system (its WORKDIR is our dir).
            const inStage = from ? path.posix.relative(workdirs.get(from[1]!) ?? '/', source) : source;
            const src = path.join(root, inStage);
            // Docker: a directory's contents go to dest; a file goes into dest when dest ends in '/'.
            const intoDir = !statSync(src).isDirectory() && (destArg.endsWith('/') || parts.length > 1);
            const target = path.join(dir, destArg, intoDir ? path.basename(source) : '');
            log(`COPY ${from ? `--from=${from[1]} ` : ''}${source} -> ${path.relative(workDir, target)}`);
            cpSync(src, target, {
              recursive: true,
              filter: (p) => from !== null || !ignored(path.relative(context, p)),
            });
          }
          break;
        }
        case 'RUN':
          if (last) {
            log(`(skipped in the last stage) RUN ${args}`);
            break;
          }
          log(`RUN ${args}`);
          execFileSync('bash', ['-euo', 'pipefail', '-c', args], {
            cwd: dir,
            stdio: ['ignore', 'pipe', 'pipe'],
            env: {
              ...process.env,
              // Same commands as the Dockerfile; only npm's cache is preferred over the network.
              npm_config_prefer_offline: 'true',
              PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
            },
            maxBuffer: 64 * 1024 * 1024,
          });
          break;
        case 'ENV':
          if (last) for (const [, k, v] of args.matchAll(/(\w+)=(\S+)/g)) env[k!] = v!;
          break;
        case 'ENTRYPOINT':
          entrypoint = JSON.parse(args) as string[];
          break;
        case 'CMD':
          cmd = JSON.parse(args) as string[];
          break;
        case 'WORKDIR':
          workdirs.set(stage.name, args);
          break;
        case 'USER':
        case 'VOLUME':
        case 'EXPOSE':
        case 'HEALTHCHECK':
          break; // no effect on the file set
        default:
          throw new Error(`Dockerfile instruction ${op} is not understood by the replay`);
      }
    }
  });
  return { stageDirs, env, command: [...entrypoint, ...cmd] };
}

/** Total size in bytes of the regular files under `dir` (what the image layer would hold). */
export function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += directoryBytes(full);
    else if (entry.isFile()) total += statSync(full).size;
  }
  return total;
}

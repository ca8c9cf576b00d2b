/**
 * The worker as deployed runs compiled JavaScript (the Dockerfile's `npm run build`), not through
 * tsx, whose loader and transform cache alone add ~40 MB of RSS. Memory benchmarks compile the
 * source into node_modules/.cache (not ./dist, which bin/crm-sync.js would then prefer over the
 * source in a developer's clone) and run that; `../../prisma` from the output reaches the
 * migrations through a symlink, and packages resolve from the repository's node_modules.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './harness.js';

export const COMPILED_ROOT = path.join(REPO_ROOT, 'node_modules', '.cache', 'crm-sync-bench');

/**
 * Compiles src/ (about 30 s on 2 cores), builds the embedded template (as `npm run build`) and returns the CLI entry to run with node: a copy of
 * bin/crm-sync.js next to the output, which runs it (and `start` its node flags, src/cli/nodeFlags.ts)
 * as the image's ENTRYPOINT does. `root`: another directory, so that two benchmarks running at
 * once (the soak's two databases) do not remove each other's build.
 */
export function compileWorker(root = COMPILED_ROOT): string {
  const outDir = path.join(root, 'dist');
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  symlinkSync(path.join(REPO_ROOT, 'prisma'), path.join(root, 'prisma'));
  execFileSync(
    process.execPath,
    [
      path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      outDir,
    ],
    { cwd: REPO_ROOT, stdio: 'inherit' },
  );
  // As `npm run build` does: the embedded database's template, which a first start loads.
  const builder = pathToFileURL(path.join(outDir, 'store', 'buildEmbeddedTemplate.js')).href;
  execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `await (await import(${JSON.stringify(builder)})).buildEmbeddedTemplate();`,
    ],
    { cwd: REPO_ROOT, stdio: 'inherit' },
  );
  cpSync(path.join(REPO_ROOT, 'bin'), path.join(root, 'bin'), { recursive: true });
  return path.join(root, 'bin', 'crm-sync.js');
}

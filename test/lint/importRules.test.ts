// `npm run lint` runs dependency-cruiser with .dependency-cruiser.mjs; these run the same command
// on a small src/ in a temporary folder, so "lint fails on an import cycle or a layer break" is tested.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const depcruise = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
const config = path.join(root, '.dependency-cruiser.mjs');

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Writes `files` (path under the folder -> source) and runs the lint's dependency check there. */
async function check(files: Record<string, string>): Promise<{ code: number; output: string }> {
  dir = await mkdtemp(path.join(tmpdir(), 'import-rules-'));
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext' } }),
  );
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [depcruise, 'src', '--config', config, '--output-type', 'err'],
      { cwd: dir },
    );
    return { code: 0, output: stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, output: e.stdout };
  }
}

describe('import rules (npm run lint)', () => {
  it('pass when imports point down the layers', async () => {
    const r = await check({
      'src/util/clock.ts': 'export const now = () => 0;\n',
      'src/store/repo.ts': "import { now } from '../util/clock.js';\nexport const read = () => now();\n",
    });
    expect(r.output).toContain('no dependency violations found');
    expect(r.code).toBe(0);
  });

  it('fail on an import cycle (type-only imports included) and on an import up the layers', async () => {
    const r = await check({
      'src/pipelines/a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
      'src/pipelines/b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
      'src/store/repo.ts': 'export const read = () => 0;\n',
      'src/crm/adapter.ts': "import { read } from '../store/repo.js';\nexport const lookup = () => read();\n",
    });
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/no-circular: src\/pipelines\/a\.ts → \s*src\/pipelines\/b\.ts/);
    expect(r.output).toMatch(/layer-crm: src\/crm\/adapter\.ts → src\/store\/repo\.ts/);
  });
});

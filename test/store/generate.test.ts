import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GENERATED = path.join(ROOT, 'src/generated/prisma');
const out = mkdtempSync(path.join(os.tmpdir(), 'crm-sync-generate-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

type Generate = (schemaPath?: string, output?: string) => Promise<string[]>;

function files(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full, base) : [path.relative(base, full)];
  });
}

describe('Prisma client generation without the Prisma CLI (the postinstall path)', () => {
  it('generates the client offline, identical to src/generated/prisma', async () => {
    const script = path.join(ROOT, 'scripts/prisma-generate.mjs');
    const { generatePrismaClient } = (await import(script)) as { generatePrismaClient: Generate };
    expect(await generatePrismaClient(undefined, out)).toEqual([out]);

    const produced = files(out).sort();
    expect(produced).toContain('client.ts');
    expect(files(GENERATED).sort(), 'run `npm run prisma:generate` after changing the schema').toEqual(
      produced,
    );
    for (const file of produced) {
      expect(readFileSync(path.join(GENERATED, file), 'utf8'), file).toBe(
        readFileSync(path.join(out, file), 'utf8'),
      );
    }
  });
});

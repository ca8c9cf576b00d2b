import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-sync-qc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Loads the generated client's query compiler in a fresh process (PrismaClient.$connect loads it;
 * the adapter's pool does not connect until a query) and writes a heap snapshot. Reports how many
 * WebAssembly modules were compiled, so that a client that never loaded the compiler cannot pass.
 */
function snapshotAfterLoad(): { compiled: number; snapshot: string } {
  const child = `
    import v8 from 'node:v8';
    let compiled = 0;
    const Module = WebAssembly.Module;
    WebAssembly.Module = class extends Module { constructor(bytes) { super(bytes); compiled++; } };
    const { PrismaClient } = await import(${JSON.stringify(path.join(ROOT, 'src/generated/prisma/client.ts'))});
    const { PrismaPg } = await import('@prisma/adapter-pg');
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: 'postgresql://127.0.0.1:9/none' }) });
    await prisma.$connect();
    const snapshot = v8.writeHeapSnapshot(${JSON.stringify(path.join(dir, 'after-load.heapsnapshot'))});
    await prisma.$disconnect();
    console.log(JSON.stringify({ compiled, snapshot }));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { compiled: number; snapshot: string };
}

/** The string nodes of a heap snapshot over 100 kB: their size and (the start of) their text. */
function bigStrings(file: string): { size: number; text: string }[] {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const [type, name, size] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const stringType = snap.snapshot.meta.node_types[0].indexOf('string');
  const found: { size: number; text: string }[] = [];
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    if (snap.nodes[i + type] === stringType && snap.nodes[i + size]! > 100_000) {
      found.push({ size: snap.nodes[i + size]!, text: snap.strings[snap.nodes[i + name]!]! });
    }
  }
  return found;
}

describe("the Prisma query compiler's WebAssembly", () => {
  it('is compiled once, and its 4.4 MB base64 text is not kept on the heap afterwards', () => {
    const { compiled, snapshot } = snapshotAfterLoad();
    expect(compiled).toBe(1);
    // Base64 of a wasm binary starts with its magic number "\0asm" ("AGFzbQ"), whether it is the
    // base64 module's source (`const wasm = "AGFzbQ...`) or the literal itself. (A snapshot cuts
    // string values short; their size is the node's.)
    const base64Wasm = bigStrings(snapshot).filter((s) => s.size > 1_000_000 && s.text.includes('AGFzbQ'));
    expect(base64Wasm.map((s) => s.size)).toEqual([]);
  }, 60_000);

  it('fails the generation when Prisma changes the loader, instead of keeping the import', async () => {
    const { readQueryCompilerWasm } = (await import(path.join(ROOT, 'scripts/prisma-generate.mjs'))) as {
      readQueryCompilerWasm: (source: string) => string;
    };
    expect(() => readQueryCompilerWasm('config.compilerWasm = undefined')).toThrow(/loader changed/);
  });
});

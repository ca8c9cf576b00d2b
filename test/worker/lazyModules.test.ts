import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * What the worker's module graph loads before it knows its database: everything `crm-sync start`
 * imports statically. The embedded database's PGlite (~3 MB of RSS) and the migration engine's
 * WebAssembly must come in only on the paths that use them (docs/performance.md, "Footprint").
 */
function staticImports(entry: string): { packages: string[]; urls: string[] } {
  const hook = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); seen.add(r.url); return r; } });
    process.on('exit', () => console.log(JSON.stringify([...seen])));`;
  const out = execFileSync(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(hook)}`,
      '--import',
      'tsx',
      '-e',
      `await import(${JSON.stringify(entry)})`,
    ],
    { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, input: '' },
  );
  const urls = JSON.parse(out.trim().split('\n').at(-1)!) as string[];
  const packages = [
    ...new Set(urls.flatMap((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1] ?? [])),
  ];
  return { packages, urls };
}

describe("the worker's static imports", () => {
  it('load neither PGlite nor the schema engine, but do load what every worker needs', () => {
    const { packages, urls } = staticImports('./src/worker/app.ts');
    expect(packages).toContain('fastify');
    expect(packages).toContain('pg');
    expect(packages).not.toContain('@electric-sql/pglite');
    expect(packages).not.toContain('pglite-prisma-adapter');
    expect(packages).not.toContain('@prisma/schema-engine-wasm');
    // The Service transport takes undici's agent and request API, not its index (fetch, WebSocket,
    // caches, mocks: ~3.5 MB the worker never uses).
    expect(urls.some((u) => u.includes('/node_modules/undici/lib/dispatcher/agent.js'))).toBe(true);
    expect(urls.some((u) => /\/node_modules\/undici\/(index\.js|lib\/web\/fetch\/)/.test(u))).toBe(false);
  }, 60_000);
});

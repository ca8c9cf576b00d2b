import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { SchemaEngine } from '@prisma/schema-engine-wasm';
import type { Logger } from '../log/logger.js';
import type { MigrationAdapter } from './migrationAdapters.js';

/**
 * Prisma's schema engine compiled to WebAssembly (@prisma/schema-engine-wasm, pinned): migrations
 * without the native binary, which Prisma's CLI downloads from a host that may be unreachable.
 *
 * Node 20 cannot import the package's entry (it imports a .wasm module), so the module is
 * instantiated by hand. Only once per process: a second instance breaks the first, hence the
 * module-level cache below (the one singleton of the store, forced by the engine).
 */
type EngineClass = typeof SchemaEngine;
let engineClass: Promise<EngineClass> | undefined;

function loadEngineClass(): Promise<EngineClass> {
  engineClass ??= instantiate().catch((err: unknown) => {
    engineClass = undefined;
    throw err;
  });
  return engineClass;
}

async function instantiate(): Promise<EngineClass> {
  // A Rust panic reports its message through this global; without it the panic surfaces as a
  // confusing "cannot read properties of undefined" TypeError.
  (globalThis as { PRISMA_WASM_PANIC_REGISTRY?: unknown }).PRISMA_WASM_PANIC_REGISTRY = panics;
  const glue = await import('@prisma/schema-engine-wasm/schema_engine_bg');
  const gluePath = createRequire(import.meta.url).resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const bytes = await readFile(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'));
  const module = await wasmApi.compile(bytes);
  const instance = await wasmApi.instantiate(module, { './schema_engine_bg.js': glue });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return glue.SchemaEngine;
}

/** The part of the WebAssembly global used here (this project's lib settings have no DOM types). */
interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  instantiate(module: object, imports: Record<string, object>): Promise<{ exports: Record<string, unknown> }>;
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** Where the engine leaves a Rust panic's message before the wasm traps. */
class PanicRegistry {
  private message = '';
  get(): string {
    return this.message;
  }
  set_message(message: string): void {
    this.message = message;
  }
  /** The message of a panic since the last call, if any. */
  take(): string {
    const message = this.message;
    this.message = '';
    return message;
  }
}

const panics = new PanicRegistry();

/** The engine's version (the prisma-engines commit it was built from). */
export async function schemaEngineVersion(): Promise<string> {
  await loadEngineClass();
  const glue = await import('@prisma/schema-engine-wasm/schema_engine_bg');
  return glue.version();
}

/** Runs `fn` with an engine bound to `adapter`, then frees both. */
export async function withSchemaEngine<T>(
  adapter: MigrationAdapter,
  fn: (engine: SchemaEngine) => Promise<T>,
  logger?: Logger,
): Promise<T> {
  try {
    const Engine = await loadEngineClass();
    const bound = bindMigrationAwareSqlAdapterFactory(adapter.factory);
    // An adapter's own (non-SQL) error reaches us as "External error id#N"; the original waits in
    // the adapter's error registry.
    const explain = (err: unknown): unknown => {
      const panic = panics.take();
      if (panic) return new Error(`Prisma schema engine panicked: ${panic}`, { cause: err });
      const id = /External error id#(\d+)/.exec(err instanceof Error ? err.message : '')?.[1];
      return (id === undefined ? undefined : bound.errorRegistry.consumeError(Number(id))?.error) ?? err;
    };
    const engine = await Engine.new(
      { datamodels: undefined },
      (line: string) => logger?.trace({ engine: line }),
      bound,
    ).catch((err: unknown) => {
      throw explain(err);
    });
    try {
      return await fn(engine);
    } catch (err) {
      throw explain(err);
    } finally {
      try {
        engine.free();
      } catch {
        // After a panic the engine is still "borrowed" and cannot be freed; nothing to release.
      }
    }
  } finally {
    await adapter.dispose();
  }
}

/** Filters the engine wants on every call: crm-sync manages every table of its schema. */
export const NO_EXTERNAL = { externalTables: [] as string[], externalEnums: [] as string[] };

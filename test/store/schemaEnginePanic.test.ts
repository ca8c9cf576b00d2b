import { describe, expect, it } from 'vitest';
import { scratchMigrationAdapter, type MigrationAdapter } from '../../src/store/migrationAdapters.js';
import { withSchemaEngine } from '../../src/store/schemaEngine.js';

// Its own file: a panic leaves the process's one wasm instance unusable.
describe('schema engine failures', () => {
  it("surface an adapter's own error instead of the engine's 'External error id#N'", async () => {
    const refusing: MigrationAdapter = {
      factory: {
        provider: 'postgres',
        adapterName: 'refusing',
        connect: () => Promise.reject(new Error('connection refused by the test')),
        connectToShadowDb: () => Promise.reject(new Error('no shadow')),
      },
      dispose: async () => undefined,
    };
    await expect(withSchemaEngine(refusing, async () => 'unreachable')).rejects.toThrow(
      'connection refused by the test',
    );
  });

  it("surface a panic with the engine's own message, and the adapter is still disposed", async () => {
    const scratch = await scratchMigrationAdapter();
    let disposed = false;
    const adapter: MigrationAdapter = {
      factory: scratch.factory,
      dispose: async () => {
        disposed = true;
        await scratch.dispose();
      },
    };
    await expect(
      withSchemaEngine(adapter, async (engine) => {
        engine.debugPanic();
      }),
    ).rejects.toThrow(/^Prisma schema engine panicked: .*\nThis is the debugPanic artificial panic/);
    expect(disposed).toBe(true);
  });
});

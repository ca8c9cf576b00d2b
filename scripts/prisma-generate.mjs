#!/usr/bin/env node
/**
 * Generates the Prisma client (src/generated/prisma) from prisma/schema.prisma; run by `postinstall`.
 *
 * Calls Prisma's generator in-process instead of `prisma generate`: every Prisma CLI command first
 * downloads the native schema engine from Prisma's binary host, which a machine that reaches only
 * the npm registry cannot do (shared PRISMA-OFFLINE.md). @prisma/internals is Prisma's internal
 * API, so it is pinned exactly and test/store/generate.test.ts fails if a bump breaks this path.
 * Their ESM build is broken; the CommonJS build is loaded through createRequire.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Generates the client for `schemaPath`; `output` overrides the generator's output folder (tests).
 * Returns the folders written.
 */
export async function generatePrismaClient(schemaPath = path.join(root, 'prisma/schema.prisma'), output) {
  const require = createRequire(path.join(root, 'package.json'));
  const { loadSchemaContext, getGenerators } = require('@prisma/internals');
  const { createDefaultRegistry } = require('@prisma/client-generator-registry');
  const schemaContext = await loadSchemaContext({
    schemaPath: { cliProvidedPath: schemaPath },
    printLoadMessage: false,
    cwd: root,
  });
  const generators = await getGenerators({
    schemaContext,
    registry: createDefaultRegistry('prisma').toInternal(),
    cliCommand: 'generate',
    skipDownload: true,
    overrideGenerators: output
      ? schemaContext.generators.map((g) => ({ ...g, output: { value: output, fromEnvVar: null } }))
      : undefined,
  });
  const written = [];
  try {
    for (const generator of generators) {
      await generator.generate();
      const dir = generator.config.output?.value ?? '(unknown)';
      const classFile = path.join(dir, 'internal/class.ts');
      if (existsSync(classFile))
        writeFileSync(classFile, readQueryCompilerWasm(readFileSync(classFile, 'utf8')));
      written.push(dir);
    }
  } finally {
    for (const generator of generators) generator.stop();
  }
  return written;
}

/**
 * The generated client loads its query compiler's WebAssembly by importing a module that holds it
 * as a 4.4 MB base64 string literal. An ES module is never unloaded, so the process would keep that
 * module's source and its literal (~9 MB of V8 heap, a third of an idle worker's live objects;
 * docs/performance.md, "Footprint") for the base64 of a binary it decoded once. This rewrites the
 * loader to read the same file as text instead: the strings are garbage once the module is compiled.
 * Fails the generation if Prisma changes the loader, rather than silently keeping the import.
 */
export function readQueryCompilerWasm(classSource) {
  const loader =
    /const \{ wasm \} = await import\(("[^"]+\.wasm-base64\.mjs")\)\n(\s*)return await decodeBase64AsWasm\(wasm\)/;
  const match = loader.exec(classSource);
  if (!match) {
    throw new Error(
      "prisma-generate: the generated client's query compiler loader changed; update readQueryCompilerWasm",
    );
  }
  const [, specifier, indent] = match;
  const replacement = [
    `// crm-sync (scripts/prisma-generate.mjs): read as text, not imported, so that the module cache`,
    `${indent}// does not keep ~9 MB of base64 for the life of the process.`,
    `${indent}const { readFile } = await import('node:fs/promises')`,
    `${indent}const { createRequire } = await import('node:module')`,
    `${indent}const file = createRequire(import.meta.url).resolve(${specifier})`,
    `${indent}const source = await readFile(file, 'utf8')`,
    `${indent}return await decodeBase64AsWasm(source.slice(source.indexOf('"') + 1, source.lastIndexOf('"')))`,
  ].join('\n');
  return classSource.replace(loader, replacement);
}

function canResolve(name) {
  try {
    createRequire(path.join(root, 'package.json')).resolve(name);
    return true;
  } catch {
    return false;
  }
}

async function main() {
  // Installed as another project's dependency: the published package runs from dist/, which was
  // built with the client inside. (A Docker build runs this before copying src/: not a reason to skip.)
  if (root.split(path.sep).includes('node_modules')) return;
  if (!existsSync(path.join(root, 'prisma/schema.prisma'))) return;
  if (!canResolve('@prisma/internals') || !canResolve('@prisma/client-generator-registry')) {
    console.error(
      'prisma-generate: @prisma/internals is not installed (an install without dev dependencies?); ' +
        'the Prisma client was not generated. Run `npm install` with dev dependencies, then `npm run prisma:generate`.',
    );
    process.exit(existsSync(path.join(root, 'src/generated/prisma/client.ts')) ? 0 : 1);
  }
  const started = Date.now();
  const written = await generatePrismaClient();
  for (const dir of written) {
    console.log(`Generated the Prisma client into ${path.relative(root, dir)} (${Date.now() - started} ms)`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`prisma-generate: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}

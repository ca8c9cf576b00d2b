#!/usr/bin/env node
// Runs the compiled CLI when it has been built (Docker, npm pack), else the TypeScript source via tsx.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
// An older Node fails deep inside a dependency: say so plainly instead (exits).
import './require-node.js';

const compiled = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (existsSync(compiled)) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}

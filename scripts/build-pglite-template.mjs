// `npm run build`, after tsc: the embedded database's pre-built data directory
// (src/store/embeddedTemplate.ts), so that a first start does not run initdb.
import { buildEmbeddedTemplate } from '../dist/store/buildEmbeddedTemplate.js';

const started = Date.now();
const manifest = await buildEmbeddedTemplate();
console.log(
  `Built the embedded database template (PGlite ${manifest.pglite}, ${manifest.migrations.length} migrations) in ${Date.now() - started} ms`,
);

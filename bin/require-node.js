// Exits with the plain version message on a Node.js crm-sync cannot run on. Imported first (before
// anything that needs a newer Node) by bin/crm-sync.js and scripts/demo.ts; `npm run demo` runs it
// on its own first, so that not even tsx loads on an old Node.
import process from 'node:process';
import { unsupportedNode } from './node-check.js';

const unsupported = unsupportedNode(process.versions.node);
if (unsupported) {
  console.error(unsupported);
  // 2: the admin's to fix, like every configuration error (the systemd unit does not restart on it).
  process.exit(2);
}

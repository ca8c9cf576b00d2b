#!/usr/bin/env node
// `crm-sync-sandbox <service|hubspot|salesforce>`: the sandboxes run from their TypeScript
// sources through tsx (they are development tools and are never compiled).
import { register } from 'tsx/esm/api';

register();
const { sandboxProgram } = await import(new URL('../src/cli.ts', import.meta.url).href);
await sandboxProgram().parseAsync(process.argv);

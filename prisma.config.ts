// For the Prisma CLI, where it can run (every CLI command first downloads Prisma's native engine):
// `npx prisma migrate deploy` / `migrate status` then use the same folders and table as
// `crm-sync migrate`. crm-sync itself never reads this file (docs/persistence.md).
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL },
});

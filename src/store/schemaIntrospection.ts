/**
 * What a database says about crm-sync's tables (information_schema, read at run time): their
 * columns, primary keys and foreign keys, and the order in which they can be filled.
 */

/** Runs one SQL statement and returns its rows. */
export type SqlRunner = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

export interface TableShape {
  name: string;
  /** Columns in their declared order, generated columns left out (they cannot be inserted). */
  columns: string[];
  primaryKey: string[];
  /** Tables this one references through a foreign key. */
  references: string[];
}

/** Prisma's bookkeeping: each database keeps its own, written by its own migrations. */
const NOT_DATA = new Set(['_prisma_migrations']);

/** The base tables of the current schema, with columns, primary keys and references. */
export async function readSchema(sql: SqlRunner): Promise<Map<string, TableShape>> {
  const tables = await sql(
    `SELECT table_name::text AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const columns = await sql(
    `SELECT table_name::text AS table, column_name::text AS column FROM information_schema.columns
     WHERE table_schema = current_schema() AND is_generated = 'NEVER' ORDER BY table_name, ordinal_position`,
  );
  const keys = await sql(
    `SELECT k.table_name::text AS table, k.column_name::text AS column
     FROM information_schema.table_constraints c
     JOIN information_schema.key_column_usage k
       ON k.constraint_schema = c.constraint_schema AND k.constraint_name = c.constraint_name
     WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = current_schema()
     ORDER BY k.table_name, k.ordinal_position`,
  );
  const references = await sql(
    `SELECT DISTINCT c.table_name::text AS table, u.table_name::text AS parent
     FROM information_schema.table_constraints c
     JOIN information_schema.constraint_column_usage u
       ON u.constraint_schema = c.constraint_schema AND u.constraint_name = c.constraint_name
     WHERE c.constraint_type = 'FOREIGN KEY' AND c.table_schema = current_schema()`,
  );
  const shapes = new Map<string, TableShape>();
  for (const { name } of tables) {
    if (typeof name !== 'string' || NOT_DATA.has(name)) continue;
    shapes.set(name, { name, columns: [], primaryKey: [], references: [] });
  }
  for (const row of columns) shapes.get(String(row.table))?.columns.push(String(row.column));
  for (const row of keys) shapes.get(String(row.table))?.primaryKey.push(String(row.column));
  for (const row of references) {
    const parent = String(row.parent);
    if (parent !== row.table) shapes.get(String(row.table))?.references.push(parent);
  }
  return shapes;
}

/**
 * Tables ordered so that each comes after the tables it references (a topological sort; ties by
 * name, for a stable order). A reference cycle cannot be filled table by table, so it is refused.
 */
export function copyOrder(shapes: Map<string, TableShape>): TableShape[] {
  const ordered: TableShape[] = [];
  const placed = new Set<string>();
  const remaining = [...shapes.values()].sort((a, b) => a.name.localeCompare(b.name));
  while (remaining.length > 0) {
    const index = remaining.findIndex((t) =>
      t.references.every((parent) => placed.has(parent) || !shapes.has(parent)),
    );
    if (index < 0) {
      throw new Error(`foreign keys form a cycle among ${remaining.map((t) => t.name).join(', ')}`);
    }
    const [next] = remaining.splice(index, 1);
    ordered.push(next!);
    placed.add(next!.name);
  }
  return ordered;
}

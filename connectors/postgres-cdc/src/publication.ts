/**
 * The publication that tells pgoutput which tables to send, managed per Debezium's
 * `publication.autocreate.mode`:
 *   all_tables  create `FOR ALL TABLES` when missing (needs superuser); filtering
 *               happens in the connector. An existing publication is left as it is.
 *   filtered    create it for exactly the captured tables, or reset an existing one
 *               to them (ALTER PUBLICATION ... SET TABLE), so the server does not
 *               decode changes nobody wants.
 *   disabled    never touch it; it must exist.
 * Called once at task start, before the slot is read from.
 */
import type pg from 'pg';
import type { TableId } from './table-filter.ts';

export type PublicationMode = 'all_tables' | 'filtered' | 'disabled';

export class PublicationError extends Error {
  readonly kind = 'publication';
  constructor(message: string) {
    super(message);
    this.name = 'PublicationError';
  }
}

function qualified(client: pg.Client, t: TableId): string {
  return `${client.escapeIdentifier(t.schema)}.${client.escapeIdentifier(t.table)}`;
}

export async function publicationExists(client: pg.Client, name: string): Promise<boolean> {
  const result = await client.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [name]);
  return (result.rowCount ?? 0) > 0;
}

/** Make the publication match the mode; returns what was done, for the log. */
export async function ensurePublication(
  client: pg.Client,
  name: string,
  mode: PublicationMode,
  tables: TableId[],
): Promise<'created' | 'updated' | 'unchanged'> {
  const exists = await publicationExists(client, name);
  const id = client.escapeIdentifier(name);
  switch (mode) {
    case 'disabled':
      if (!exists)
        throw new PublicationError(
          `Publication '${name}' does not exist and publication.autocreate.mode is disabled: ` +
            `create it (CREATE PUBLICATION ${id} FOR TABLE ...) or set publication.autocreate.mode to filtered`,
        );
      return 'unchanged';
    case 'all_tables':
      if (exists) return 'unchanged';
      await client.query(`CREATE PUBLICATION ${id} FOR ALL TABLES`);
      return 'created';
    case 'filtered': {
      if (tables.length === 0)
        throw new PublicationError(
          `No table matches the include/exclude lists, so publication '${name}' would be empty`,
        );
      const list = tables.map((t) => qualified(client, t)).join(', ');
      if (!exists) {
        await client.query(`CREATE PUBLICATION ${id} FOR TABLE ${list}`);
        return 'created';
      }
      await client.query(`ALTER PUBLICATION ${id} SET TABLE ${list}`);
      return 'updated';
    }
  }
}

/** Tables the publication currently publishes. */
export async function publishedTables(client: pg.Client, name: string): Promise<TableId[]> {
  const result = await client.query<{ schemaname: string; tablename: string }>(
    'SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1, 2',
    [name],
  );
  return result.rows.map((r) => ({ schema: r.schemaname, table: r.tablename }));
}

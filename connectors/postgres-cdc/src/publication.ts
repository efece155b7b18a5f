/**
 * The publication that tells pgoutput which tables to send, managed per Debezium's
 * `publication.autocreate.mode`:
 *   all_tables  create `FOR ALL TABLES` when missing (needs superuser); filtering
 *               happens in the connector. An existing publication is left as it is.
 *   filtered    create it for exactly the captured tables, or reset an existing one
 *               to them (ALTER PUBLICATION ... SET TABLE), so the server does not
 *               decode changes nobody wants.
 *   disabled    never touch it; it must exist.
 * publish.via.partition.root (PostgreSQL 13+) is the publication's
 * publish_via_partition_root: a created publication gets it (WITH clause), a filtered
 * one is altered to it, and an all_tables or disabled one that differs is refused,
 * since pgoutput would name the changes of partitioned tables otherwise than the
 * snapshot and the table filter do (the parent's name, or each partition's).
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

/** publish_via_partition_root of an existing publication; null when it does not exist. */
async function existingViaRoot(client: pg.Client, name: string): Promise<boolean | null> {
  // SELECT *: pubviaroot exists from PostgreSQL 13 on; before, every publication is "false".
  const result = await client.query('SELECT * FROM pg_publication WHERE pubname = $1', [name]);
  if ((result.rowCount ?? 0) === 0) return null;
  const v = result.rows[0].pubviaroot;
  return v === true || v === 't';
}

/** Make the publication match the mode; returns what was done, for the log. */
export async function ensurePublication(
  client: pg.Client,
  name: string,
  mode: PublicationMode,
  tables: TableId[],
  viaPartitionRoot = false,
): Promise<'created' | 'updated' | 'unchanged'> {
  const current = await existingViaRoot(client, name);
  const exists = current !== null;
  const id = client.escapeIdentifier(name);
  // Only when asked for: servers before 13 know no such option.
  const withRoot = viaPartitionRoot ? ' WITH (publish_via_partition_root = true)' : '';
  const refuseOtherRoot = () => {
    if (current === viaPartitionRoot) return;
    throw new PublicationError(
      `Publication '${name}' has publish_via_partition_root = ${current} but publish.via.partition.root is ${viaPartitionRoot}: ` +
        `run ALTER PUBLICATION ${id} SET (publish_via_partition_root = ${viaPartitionRoot}), or set publication.autocreate.mode to filtered`,
    );
  };
  switch (mode) {
    case 'disabled':
      if (!exists)
        throw new PublicationError(
          `Publication '${name}' does not exist and publication.autocreate.mode is disabled: ` +
            `create it (CREATE PUBLICATION ${id} FOR TABLE ...) or set publication.autocreate.mode to filtered`,
        );
      refuseOtherRoot();
      return 'unchanged';
    case 'all_tables':
      if (exists) {
        refuseOtherRoot();
        return 'unchanged';
      }
      await client.query(`CREATE PUBLICATION ${id} FOR ALL TABLES${withRoot}`);
      return 'created';
    case 'filtered': {
      if (tables.length === 0)
        throw new PublicationError(
          `No table matches the include/exclude lists, so publication '${name}' would be empty`,
        );
      const list = tables.map((t) => qualified(client, t)).join(', ');
      if (!exists) {
        await client.query(`CREATE PUBLICATION ${id} FOR TABLE ${list}${withRoot}`);
        return 'created';
      }
      await client.query(`ALTER PUBLICATION ${id} SET TABLE ${list}`);
      if (current !== viaPartitionRoot)
        await client.query(
          `ALTER PUBLICATION ${id} SET (publish_via_partition_root = ${viaPartitionRoot})`,
        );
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

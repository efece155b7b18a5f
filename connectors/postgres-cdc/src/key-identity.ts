/**
 * Keys from message.key.columns against what Postgres sends of an old row. A delete (and
 * an update's old row) carries only the replica identity's columns: the primary key
 * under REPLICA IDENTITY DEFAULT, the index's columns under USING INDEX, every column
 * under FULL. A message key with a column outside the identity would be built from a
 * missing value for every delete, so its tombstone would name another key and the
 * compacted topic would keep the deleted row for ever; and a change of that column would
 * not be seen as a key change. Debezium sends such events without a word; this
 * connector refuses to start instead, naming the tables and the ALTER TABLE that fixes
 * them. Checked at start for the captured tables (startup-check.ts).
 */
import type pg from 'pg';
import type { MessageKeyColumns } from './message-key-columns.ts';
import type { TableFilter, TableId } from './table-filter.ts';

const IDENTITY_NAMES: Readonly<Record<string, string>> = {
  d: 'DEFAULT',
  n: 'NOTHING',
  i: 'USING INDEX',
};

/** The message naming the tables whose message key is not in their replica identity; null if none. */
export async function keyOutsideIdentityError(
  client: pg.Client,
  tables: readonly TableId[],
  filter: TableFilter,
  keys: MessageKeyColumns | undefined,
): Promise<string | null> {
  if (!keys || keys.isEmpty || tables.length === 0) return null;
  const result = await client.query<{
    schema: string;
    table: string;
    ident: string;
    columns: string[] | null;
    identity: string[] | null;
  }>(
    `SELECT t.schema, t.tbl AS table, c.relreplident::text AS ident,
            (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            (SELECT array_agg(a.attname::text) FROM pg_index i
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
              WHERE i.indrelid = c.oid
                AND CASE c.relreplident WHEN 'd' THEN i.indisprimary WHEN 'i' THEN i.indisreplident ELSE false END
            ) AS identity
       FROM unnest($1::text[], $2::text[]) AS t(schema, tbl)
       JOIN pg_namespace n ON n.nspname = t.schema
       JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.tbl
      ORDER BY 1, 2`,
    [tables.map((t) => t.schema), tables.map((t) => t.table)],
  );
  const problems: string[] = [];
  for (const r of result.rows) {
    if (r.ident === 'f') continue;
    const captured = (r.columns ?? []).filter((c) => filter.includesColumn(r, c));
    const key = keys.keyFor(r, captured);
    if (key === null) continue;
    const identity = r.identity ?? [];
    const outside = key.filter((c) => !identity.includes(c));
    if (outside.length === 0) continue;
    const sent = identity.length === 0 ? 'no column' : `only (${identity.join(', ')})`;
    problems.push(
      `${r.schema}.${r.table} by (${key.join(', ')}), but under REPLICA IDENTITY ${IDENTITY_NAMES[r.ident] ?? r.ident} ` +
        `Postgres sends ${sent} of a deleted or updated row`,
    );
  }
  if (problems.length === 0) return null;
  const alter = result.rows
    .filter((r) => problems.some((p) => p.startsWith(`${r.schema}.${r.table} `)))
    .map((r) => `ALTER TABLE ${quote(r.schema)}.${quote(r.table)} REPLICA IDENTITY FULL`)
    .join('; ');
  return (
    `message.key.columns keys ${problems.join('; and ')}: deletes would carry a wrong key (their ` +
    'tombstones would leave the deleted rows in the compacted topics) and changes of those columns ' +
    `would not be seen as key changes. Run ${alter}, or key the tables by columns of their replica identity`
  );
}

function quote(identifier: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(identifier)
    ? identifier
    : `"${identifier.replaceAll('"', '""')}"`;
}

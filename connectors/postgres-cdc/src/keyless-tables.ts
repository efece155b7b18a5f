/**
 * Tables without a key, and the topics they need. A table that message.key.columns
 * gives no key (message-key-columns.ts), with no primary key and no REPLICA IDENTITY
 * USING INDEX (or whose key columns column.exclude.list removes) has change events
 * with null keys. A compacted topic refuses those (INVALID_RECORD,
 * "Compacted topic cannot accept message without key"), and one refused batch fails
 * the task, so every other table would stop too. This connector's topics are compacted
 * by the plugin's default (index.ts), so the task asks the runtime to create the topic
 * of a keyless table with `cleanup.policy=delete` instead (topicCreationOverride),
 * before the table's first record.
 *
 * Where the user asked for compaction themselves (their own
 * `topic.creation.<group>.cleanup.policy` with compact, for the group that applies to
 * the topic), overriding it would silently go against their config, and keeping it
 * cannot work: the connector refuses to start, naming the tables (`keylessCompactedError`).
 * The plugin's default does not count: it is not in the connector's config.
 *
 * Group matching follows the runtime's (KIP-158, src/connect/runtime/topic-creation.ts):
 * the groups of `topic.creation.groups` in order, then `default`; the first whose
 * include list matches the whole topic name and whose exclude list does not applies,
 * and only that group's configs are the topic's (a group inherits no cleanup.policy
 * from default).
 */
import type pg from 'pg';
import type { MessageKeyColumns } from './message-key-columns.ts';
import type { TableFilter, TableId } from './table-filter.ts';
import type { TopicNaming } from './topic-naming.ts';

/** The group that asks for compaction of a topic, with the key and value that do. */
export interface ExplicitCompaction {
  group: string;
  key: string;
  value: string;
}

const listValue = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

const whole = (pattern: string) => new RegExp(`^(?:${pattern})$`);

/** Whether the user's topic.creation.* keys make `topic` compacted; null when they do not. */
export function explicitCompaction(
  config: Readonly<Record<string, string>>,
  topic: string,
): ExplicitCompaction | null {
  const groups = [
    ...listValue(config['topic.creation.groups']).filter((g) => g !== 'default'),
    'default',
  ];
  const matches = (group: string) => {
    const include = listValue(config[`topic.creation.${group}.include`]);
    const exclude = listValue(config[`topic.creation.${group}.exclude`]);
    const included =
      group === 'default' && include.length === 0
        ? true
        : include.some((p) => whole(p).test(topic));
    return included && !exclude.some((p) => whole(p).test(topic));
  };
  // As the runtime does: no group matching falls back to default.
  const group = groups.find(matches) ?? 'default';
  const key = `topic.creation.${group}.cleanup.policy`;
  const value = config[key];
  if (value === undefined || !listValue(value).includes('compact')) return null;
  return { group, key, value };
}

/**
 * The captured tables whose events would have no key, from the catalog: none of their
 * captured columns named by message.key.columns, and no primary key and no replica
 * identity index, or none of their key columns captured. The same rule as
 * table-schema.ts applies to each Relation message.
 */
export async function keylessTables(
  client: pg.Client,
  tables: readonly TableId[],
  filter: TableFilter,
  messageKeyColumns?: MessageKeyColumns,
): Promise<TableId[]> {
  if (tables.length === 0) return [];
  const result = await client.query<{
    schema: string;
    table: string;
    key: string[] | null;
    columns: string[] | null;
  }>(
    `SELECT t.schema, t.tbl AS table,
            (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            COALESCE(
              (SELECT array_agg(a.attname::text) FROM pg_index i
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                WHERE i.indrelid = c.oid AND i.indisprimary),
              (SELECT array_agg(a.attname::text) FROM pg_index i
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                WHERE i.indrelid = c.oid AND i.indisreplident AND c.relreplident = 'i')
            ) AS key
       FROM unnest($1::text[], $2::text[]) AS t(schema, tbl)
       JOIN pg_namespace n ON n.nspname = t.schema
       JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.tbl
      ORDER BY 1, 2`,
    [tables.map((t) => t.schema), tables.map((t) => t.table)],
  );
  return result.rows
    .filter((r) => {
      const captured = (r.columns ?? []).filter((column) => filter.includesColumn(r, column));
      if (messageKeyColumns?.keyFor(r, captured)) return false;
      return !(r.key ?? []).some((column) => filter.includesColumn(r, column));
    })
    .map((r) => ({ schema: r.schema, table: r.table }));
}

/**
 * The message for keyless tables whose topics (as `topics` names them, like
 * table-schema.ts) the user's config makes compacted; null if none.
 */
export function keylessCompactedError(
  topics: TopicNaming,
  keyless: readonly TableId[],
  topicCreation: Readonly<Record<string, string>>,
): string | null {
  const refused = keyless
    .map((t) => ({ t, why: explicitCompaction(topicCreation, topics.dataChangeTopic(t)) }))
    .filter((x): x is { t: TableId; why: ExplicitCompaction } => x.why !== null);
  if (refused.length === 0) return null;
  const names = refused.map(({ t }) => `${t.schema}.${t.table}`).join(', ');
  const keys = [...new Set(refused.map(({ why }) => `${why.key}=${why.value}`))].join(', ');
  return (
    `Table${refused.length > 1 ? 's' : ''} ${names} ${refused.length > 1 ? 'have' : 'has'} no primary key ` +
    '(nor REPLICA IDENTITY USING INDEX, nor columns named by message.key.columns), so their change events have null keys, and ' +
    `${keys} makes their topics compacted, which refuses records without a key. ` +
    'Add a primary key, name key columns with message.key.columns, exclude the tables (table.exclude.list), or let their topics be ' +
    `created with cleanup.policy=delete: remove ${keys}, or give them a topic.creation group ` +
    'with cleanup.policy=delete'
  );
}

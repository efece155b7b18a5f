/**
 * `message.key.columns`: which columns make the key of a table's events, as Debezium's
 * Key.CustomKeyMapper reads the key. Syntax: entries separated by `;`, each
 * `<table regex>:<column regex>,<column regex>...`, the table regex matched against
 * `schema.table`, for example
 *
 *   message.key.columns=inventory.customers:pk1,pk2;(.*).purchaseorders:pk3,pk4
 *
 * Semantics, as Debezium's:
 * - Each entry becomes one regular expression per column, `<table regex>.<column regex>`,
 *   matched against the whole `schema.table.column`, case-insensitively (Debezium's
 *   Predicates.includes). The `.` joining them is itself a regex dot, as in Debezium.
 * - The key is the columns matching the first such expression (in the table's column
 *   order), then those matching the second, and so on: `t:b,a` keys by (b, a). A column
 *   two expressions match is in the key once (Debezium would add it twice and fail to
 *   build the key schema).
 * - A table no expression matches keeps its own key: the primary key, else the replica
 *   identity index. So the key both gives tables without a primary key a key and
 *   overrides the primary key of those that have one.
 * - Only captured columns can be key columns (column.exclude.list removes a column from
 *   both the key and the value here, as it does for primary key columns).
 * Each entry must have the form Debezium validates it against (MSG_KEY_COLUMNS_PATTERN:
 * no blanks inside, one `:`), or config validation refuses the key naming the entry.
 *
 * Postgres sends the old row of an update or delete with the replica identity's columns
 * only: a key column outside the identity would be missing from every delete's key, so
 * the connector refuses to start then (key-identity.ts); REPLICA IDENTITY FULL, which a
 * table without a primary key needs anyway to publish deletes, sends them all.
 */
import type { TableId } from './table-filter.ts';

/** Debezium's MSG_KEY_COLUMNS_PATTERN, for one `;`-separated entry. */
const ENTRY = /^\s*([^\s:]+):([^:\s]+)\s*$/;

/** Why `value` is not a valid message.key.columns, or undefined when it is. */
export function messageKeyColumnsProblem(value: string): string | undefined {
  for (const entry of value.split(';')) {
    const m = ENTRY.exec(entry);
    if (!m)
      return `entry '${entry}' must have the form <fully-qualified table regex>:<column>,<column>,... (entries separated by ';')`;
    for (const column of m[2].split(',')) {
      if (column === '') return `entry '${entry.trim()}' has an empty column name`;
      try {
        new RegExp(`${m[1]}.${column}`);
      } catch {
        return `entry '${entry.trim()}': '${m[1]}.${column}' is not a valid regular expression`;
      }
    }
  }
  return undefined;
}

export class MessageKeyColumns {
  private readonly patterns: readonly RegExp[];

  /** `value` as validated by messageKeyColumnsProblem; null or blank: no custom keys. */
  constructor(value: string | null) {
    const patterns: RegExp[] = [];
    if (value !== null && value.trim() !== '') {
      for (const entry of value.split(';')) {
        const m = ENTRY.exec(entry);
        if (!m) throw new Error(`message.key.columns: ${messageKeyColumnsProblem(value)}`);
        for (const column of m[2].split(','))
          patterns.push(new RegExp(`^(?:${m[1]}.${column})$`, 'i'));
      }
    }
    this.patterns = patterns;
  }

  get isEmpty(): boolean {
    return this.patterns.length === 0;
  }

  /**
   * The key columns message.key.columns gives the table, in key order, among `columns`
   * (the table's captured columns in table order); null when it names none of them,
   * and the table keeps its own key.
   */
  keyFor(table: TableId, columns: readonly string[]): string[] | null {
    if (this.patterns.length === 0) return null;
    const prefix = `${table.schema}.${table.table}.`;
    const key: string[] = [];
    for (const p of this.patterns)
      for (const c of columns) if (!key.includes(c) && p.test(prefix + c)) key.push(c);
    return key.length === 0 ? null : key;
  }
}

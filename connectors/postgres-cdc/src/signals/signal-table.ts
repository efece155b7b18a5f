/**
 * The source signal channel: the table named by `signal.data.collection`, with
 * Debezium's three columns (id, type, data), read from the replication stream.
 *
 * As in Debezium (RelationalTableFilters), the signal table is captured whatever the
 * include and exclude lists say: a filtered publication gets it, its changes stream
 * like any captured table's (to its own topic), and an insert into it is a signal,
 * handled at its place in the stream before the insert's own record goes out. The
 * initial snapshot does not read it (it is not among the tables checkDatabase finds).
 * Its columns are taken by position, id, type, data, as Debezium's SourceSignalChannel
 * takes them.
 */
import type { SourceRecord } from '../../../../src/connect/api/index.ts';
import { NO_LISTS, TableFilter, type TableId } from '../table-filter.ts';

export interface SignalRecord {
  id: string;
  type: string;
  /** The data column's JSON text; null or empty for none. */
  data: string | null;
}

/** The stream's filter: the configured one, plus the signal table. */
export class FilterWithSignalTable extends TableFilter {
  constructor(
    private readonly inner: TableFilter,
    private readonly signalTable: TableId,
  ) {
    super(NO_LISTS);
  }

  override includesTable(id: TableId): boolean {
    return isSameTable(id, this.signalTable) || this.inner.includesTable(id);
  }

  override includesColumn(id: TableId, column: string): boolean {
    return this.inner.includesColumn(id, column);
  }
}

export function isSameTable(a: TableId, b: TableId): boolean {
  return a.schema === b.schema && a.table === b.table;
}

/**
 * The signal an insert's record carries (its `after` by column position), or null when
 * the row has fewer than three columns or no id or type.
 */
export function signalOf(record: SourceRecord): SignalRecord | null {
  const after = (record.value as { after?: Record<string, unknown> | null } | null)?.after;
  if (!after) return null;
  const [id, type, data] = Object.values(after);
  if (typeof id !== 'string' || typeof type !== 'string') return null;
  return { id, type, data: typeof data === 'string' ? data : null };
}

/** The table in a form for SQL (both parts quoted). */
export function qualifiedName(id: TableId, escapeIdentifier: (name: string) => string): string {
  return `${escapeIdentifier(id.schema)}.${escapeIdentifier(id.table)}`;
}

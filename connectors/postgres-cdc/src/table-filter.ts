/**
 * Which tables are captured, from Debezium's include/exclude keys. Each list holds
 * regular expressions matched against the whole name (anchored, as Debezium does):
 * schemas against `schema`, tables against `schema.table`, columns against
 * `schema.table.column`. An include list and its exclude list are never both set
 * (config validation refuses it). System schemas are never captured.
 */

export interface TableId {
  schema: string;
  table: string;
}

export interface FilterLists {
  schemaInclude: string[];
  schemaExclude: string[];
  tableInclude: string[];
  tableExclude: string[];
  columnInclude: string[];
  columnExclude: string[];
}

const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema', 'pg_toast']);

function anchored(patterns: string[]): RegExp[] {
  return patterns.map((p) => new RegExp(`^(?:${p})$`, 'i'));
}

/** Every list empty: every schema, table and column. */
export const NO_LISTS: FilterLists = {
  schemaInclude: [],
  schemaExclude: [],
  tableInclude: [],
  tableExclude: [],
  columnInclude: [],
  columnExclude: [],
};

export class TableFilter {
  private readonly schemaInclude: RegExp[];
  private readonly schemaExclude: RegExp[];
  private readonly tableInclude: RegExp[];
  private readonly tableExclude: RegExp[];
  private readonly columnInclude: RegExp[];
  private readonly columnExclude: RegExp[];

  /** A filter with every list empty: every schema, table and column captured. */
  static everything(): TableFilter {
    return new TableFilter(NO_LISTS);
  }

  constructor(lists: FilterLists) {
    this.schemaInclude = anchored(lists.schemaInclude);
    this.schemaExclude = anchored(lists.schemaExclude);
    this.tableInclude = anchored(lists.tableInclude);
    this.tableExclude = anchored(lists.tableExclude);
    this.columnInclude = anchored(lists.columnInclude);
    this.columnExclude = anchored(lists.columnExclude);
  }

  includesTable({ schema, table }: TableId): boolean {
    if (SYSTEM_SCHEMAS.has(schema) || schema.startsWith('pg_temp')) return false;
    if (this.schemaInclude.length > 0 && !this.schemaInclude.some((r) => r.test(schema)))
      return false;
    if (this.schemaExclude.some((r) => r.test(schema))) return false;
    const full = `${schema}.${table}`;
    if (this.tableInclude.length > 0 && !this.tableInclude.some((r) => r.test(full))) return false;
    return !this.tableExclude.some((r) => r.test(full));
  }

  includesColumn({ schema, table }: TableId, column: string): boolean {
    const full = `${schema}.${table}.${column}`;
    if (this.columnInclude.length > 0 && !this.columnInclude.some((r) => r.test(full)))
      return false;
    return !this.columnExclude.some((r) => r.test(full));
  }
}

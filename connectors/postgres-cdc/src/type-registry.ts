/**
 * The database's types (pg_type), so column type OIDs from Relation messages and
 * snapshot queries can be mapped: base types by name, enums with their labels, domains
 * to their base type, arrays to their element type (and the delimiter between their
 * elements). Loaded once at task start and
 * again when an unknown OID shows up (a type created after start).
 */
import type pg from 'pg';

export interface PgType {
  oid: number;
  name: string;
  schema: string;
  /** b base, e enum, d domain, c composite, r range, m multirange, p pseudo. */
  kind: string;
  /** Array element type, or 0. */
  elementOid: number;
  /** Domain base type and its typmod, or 0 / -1. */
  baseOid: number;
  baseTypmod: number;
  isArray: boolean;
  enumLabels: string[] | null;
  /** typdelim: what separates this type's values in an array literal (',', box's ';'). */
  delimiter: string;
}

export class TypeRegistry {
  private types = new Map<number, PgType>();

  constructor(private readonly client: pg.Client) {}

  async load(): Promise<void> {
    const result = await this.client.query(
      `SELECT t.oid, t.typname, n.nspname, t.typtype, t.typelem, t.typbasetype, t.typtypmod,
              t.typcategory = 'A' AS is_array, t.typdelim,
              (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid) AS labels
         FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace`,
    );
    const types = new Map<number, PgType>();
    for (const r of result.rows) {
      types.set(Number(r.oid), {
        oid: Number(r.oid),
        name: r.typname,
        schema: r.nspname,
        kind: r.typtype,
        elementOid: Number(r.typelem),
        baseOid: Number(r.typbasetype),
        baseTypmod: r.typtypmod,
        isArray: r.is_array,
        enumLabels: r.labels,
        delimiter: r.typdelim ?? ',',
      });
    }
    this.types = types;
  }

  /** The type, reloading the catalog once if the OID is new. */
  async resolve(oid: number): Promise<PgType | undefined> {
    if (!this.types.has(oid)) await this.load();
    return this.types.get(oid);
  }

  get(oid: number): PgType | undefined {
    return this.types.get(oid);
  }
}

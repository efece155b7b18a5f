/**
 * ReplaceField, as Kafka's org.apache.kafka.connect.transforms.ReplaceField$Value / $Key:
 * keeps only `include`d fields (all when empty), drops `exclude`d ones, and renames
 * per `renames` (`old:new,...`). Kafka's older key names `whitelist`/`blacklist` are
 * accepted. Works on structs (the new schema computed once per input schema) and on
 * schemaless maps; tombstones pass through.
 */
import {
  type AnyConfigDef,
  type ConnectRecord,
  define,
  parseConfigOrThrow,
  type Schema,
  type Transformation,
} from '../api/index.ts';
import {
  partSchema,
  partValue,
  type RecordPart,
  requireMap,
  requireStruct,
  structWithFields,
  withPart,
} from './record-part.ts';

const PURPOSE = 'field replacement';

export const replaceFieldConfigDefs: AnyConfigDef[] = [
  define<string[]>({
    name: 'exclude',
    type: 'list',
    default: [],
    importance: 'medium',
    doc: 'Fields to exclude. This takes precedence over the fields to include.',
  }),
  define<string[]>({
    name: 'include',
    type: 'list',
    default: [],
    importance: 'medium',
    doc: 'Fields to include. If specified, only these fields will be used.',
  }),
  define<string[]>({
    name: 'renames',
    type: 'list',
    default: [],
    importance: 'medium',
    doc: 'Field rename mappings, as old:new pairs.',
    validator: (v) =>
      v.every((pair) => /^[^:]+:[^:]+$/.test(pair))
        ? undefined
        : 'must be a list of old:new field name pairs',
  }),
];

export class ReplaceField implements Transformation {
  private exclude = new Set<string>();
  private include = new Set<string>();
  private renames = new Map<string, string>();
  private readonly schemaCache = new WeakMap<Schema, Schema>();

  constructor(private readonly part: RecordPart) {}

  configure(config: Readonly<Record<string, unknown>>): void {
    const raw = { ...config };
    if (raw.exclude === undefined && raw.blacklist !== undefined) raw.exclude = raw.blacklist;
    if (raw.include === undefined && raw.whitelist !== undefined) raw.include = raw.whitelist;
    const { values } = parseConfigOrThrow(replaceFieldConfigDefs, raw);
    this.exclude = new Set(values.exclude as string[]);
    this.include = new Set(values.include as string[]);
    this.renames = new Map(
      (values.renames as string[]).map((pair) => pair.split(':') as [string, string]),
    );
  }

  private kept(name: string): boolean {
    return !this.exclude.has(name) && (this.include.size === 0 || this.include.has(name));
  }

  private renamed(name: string): string {
    return this.renames.get(name) ?? name;
  }

  apply<R extends ConnectRecord>(record: R): R | null {
    const value = partValue(record, this.part);
    if (value === null || value === undefined) return record;
    const schema = partSchema(record, this.part);
    if (schema === null) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(requireMap(value, PURPOSE))) {
        if (this.kept(k)) out[this.renamed(k)] = v;
      }
      return withPart(record, this.part, null, out);
    }
    const struct = requireStruct(value, PURPOSE);
    const updated = this.updatedSchema(schema);
    const out: Record<string, unknown> = {};
    for (const f of schema.fields ?? []) {
      if (this.kept(f.name)) out[this.renamed(f.name)] = struct[f.name];
    }
    return withPart(record, this.part, updated, out);
  }

  private updatedSchema(schema: Schema): Schema {
    let updated = this.schemaCache.get(schema);
    if (updated === undefined) {
      updated = structWithFields(
        schema,
        (schema.fields ?? [])
          .filter((f) => this.kept(f.name))
          .map((f) => [this.renamed(f.name), f.schema] as const),
      );
      this.schemaCache.set(schema, updated);
    }
    return updated;
  }
}

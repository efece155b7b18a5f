/**
 * InsertField, as Kafka's org.apache.kafka.connect.transforms.InsertField$Value / $Key:
 * adds the record's topic, partition, offset (sink records only), timestamp and/or a
 * static string to a struct (with schema) or a map (schemaless). A field name ending
 * in `!` makes the added field required, `?` (the default) optional. Tombstones pass
 * through untouched. The widened schema is computed once per input schema.
 */
import {
  type AnyConfigDef,
  type ConnectRecord,
  DataException,
  define,
  parseConfigOrThrow,
  type Schema,
  Schemas,
  type Transformation,
} from '../api/index.ts';
import {
  isSinkRecord,
  partSchema,
  partValue,
  type RecordPart,
  requireMap,
  requireStruct,
  structWithFields,
  withPart,
} from './record-part.ts';

const PURPOSE = 'field insertion';

const optionalString = (name: string, doc: string) =>
  define<string | null>({ name, type: 'string', default: null, importance: 'medium', doc });

export const insertFieldConfigDefs: AnyConfigDef[] = [
  optionalString('topic.field', 'Field name for the Kafka topic (suffix ! for required).'),
  optionalString('partition.field', 'Field name for the Kafka partition.'),
  optionalString('offset.field', 'Field name for the Kafka offset (sink connectors only).'),
  optionalString('timestamp.field', 'Field name for the record timestamp.'),
  optionalString('static.field', 'Field name for the static value.'),
  optionalString('static.value', 'The static value to insert.'),
  define<boolean>({
    name: 'replace.null.with.default',
    type: 'boolean',
    default: true,
    importance: 'medium',
    doc: 'Keep schema defaults for null fields when copying the struct.',
  }),
];

interface InsertSpec {
  name: string;
  optional: boolean;
}

function spec(raw: unknown): InsertSpec | null {
  if (typeof raw !== 'string' || raw === '') return null;
  if (raw.endsWith('!')) return { name: raw.slice(0, -1), optional: false };
  if (raw.endsWith('?')) return { name: raw.slice(0, -1), optional: true };
  return { name: raw, optional: true };
}

export class InsertField implements Transformation {
  private topic: InsertSpec | null = null;
  private partition: InsertSpec | null = null;
  private offset: InsertSpec | null = null;
  private timestamp: InsertSpec | null = null;
  private staticField: InsertSpec | null = null;
  private staticValue: string | null = null;
  private replaceNullWithDefault = true;
  private readonly schemaCache = new WeakMap<Schema, Schema>();

  constructor(private readonly part: RecordPart) {}

  configure(config: Readonly<Record<string, unknown>>): void {
    const { values } = parseConfigOrThrow(insertFieldConfigDefs, config);
    this.topic = spec(values['topic.field']);
    this.partition = spec(values['partition.field']);
    this.offset = spec(values['offset.field']);
    this.timestamp = spec(values['timestamp.field']);
    this.staticField = spec(values['static.field']);
    this.staticValue = values['static.value'] as string | null;
    this.replaceNullWithDefault = values['replace.null.with.default'] as boolean;
    if (this.staticField && this.staticValue === null) {
      throw new DataException('InsertField: static.field is set but static.value is missing');
    }
  }

  apply<R extends ConnectRecord>(record: R): R | null {
    const value = partValue(record, this.part);
    if (value === null || value === undefined) return record;
    const schema = partSchema(record, this.part);
    const additions = this.additions(record);
    if (schema === null) {
      const out = { ...requireMap(value, PURPOSE) };
      for (const [s, v] of additions) out[s.name] = v;
      return withPart(record, this.part, null, out);
    }
    const struct = requireStruct(value, PURPOSE);
    const updated = this.widen(schema);
    const out: Record<string, unknown> = {};
    for (const f of schema.fields ?? []) {
      const v = struct[f.name] ?? null;
      // As Kafka's Struct.get: a null field reads as its default unless told otherwise.
      out[f.name] = v === null && this.replaceNullWithDefault ? (f.schema.defaultValue ?? null) : v;
    }
    for (const [s, v] of additions) out[s.name] = v;
    return withPart(record, this.part, updated, out);
  }

  private additions(record: ConnectRecord): Array<[InsertSpec, unknown]> {
    const out: Array<[InsertSpec, unknown]> = [];
    if (this.topic) out.push([this.topic, record.topic]);
    if (this.partition) out.push([this.partition, record.kafkaPartition ?? null]);
    if (this.offset) {
      if (!isSinkRecord(record)) {
        throw new DataException(`Only SinkRecord supported for [${PURPOSE}], found: SourceRecord`);
      }
      out.push([this.offset, record.kafkaOffset]);
    }
    if (this.timestamp) out.push([this.timestamp, record.timestamp ?? null]);
    if (this.staticField) out.push([this.staticField, this.staticValue]);
    return out;
  }

  private widen(schema: Schema): Schema {
    let updated = this.schemaCache.get(schema);
    if (updated !== undefined) return updated;
    const fields: Array<[string, Schema]> = (schema.fields ?? []).map((f) => [f.name, f.schema]);
    const add = (s: InsertSpec | null, make: (o: { optional: boolean }) => Schema) => {
      if (s) fields.push([s.name, make({ optional: s.optional })]);
    };
    add(this.topic, Schemas.string);
    add(this.partition, Schemas.int32);
    add(this.offset, Schemas.int64);
    add(this.timestamp, Schemas.timestamp);
    add(this.staticField, Schemas.string);
    updated = structWithFields(schema, fields);
    this.schemaCache.set(schema, updated);
    return updated;
  }
}

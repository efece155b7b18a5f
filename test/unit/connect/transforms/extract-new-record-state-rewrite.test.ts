/**
 * ExtractNewRecordState (`unwrap`) rewriting deletes, checked against Debezium's
 * documented output. Debezium's "New Record State Extraction" page
 * (https://debezium.io/documentation/reference/stable/transformations/event-flattening.html)
 * and the Red Hat Debezium User Guide, "Configuration of Debezium event flattening
 * transformation", give for `delete.handling.mode=rewrite`:
 *
 *     "value": { "pk": 2, "cola": null, "__deleted": "true" }
 *
 * i.e. the `before` row's key/value pairs, null for the columns the delete did not
 * carry, and `__deleted`. Under REPLICA IDENTITY DEFAULT Postgres sends only the key
 * of a deleted row; a NOT NULL column then holds its type's placeholder in `before`
 * ("" for text, 0 for numbers: JdbcValueConverters' fallback, which Debezium's and
 * this project's Postgres connectors apply because the required field cannot be
 * null), and the Postgres connector names those columns in BEFORE_PLACEHOLDERS_HEADER.
 * The rewrite must show those columns as null (the field's schema becomes optional
 * so that it may), and keep the before image's values when the delete carried the
 * whole row (REPLICA IDENTITY FULL), even where they equal the placeholders.
 *
 * One divergence is deliberate and not checked here: this runtime writes `__deleted`
 * as an optional boolean, Debezium as the string "true"/"false".
 */
import { describe, expect, it } from 'vitest';
import {
  BEFORE_PLACEHOLDERS_HEADER,
  type Schema,
  Schemas,
  type SinkRecord,
} from '../../../../src/connect/api/index.ts';
import { ExtractNewRecordState } from '../../../../src/connect/transforms/extract-new-record-state.ts';

const ZONED_TIMESTAMP = 'io.debezium.time.ZonedTimestamp';

/** CREATE TABLE t (pk int PRIMARY KEY, cola text NOT NULL, created timestamptz NOT NULL, qty int NOT NULL, note text) */
const row = Schemas.struct(
  [
    ['pk', Schemas.int32()],
    ['cola', Schemas.string()],
    ['created', Schemas.string({ name: ZONED_TIMESTAMP, version: 1 })],
    ['qty', Schemas.int32()],
    ['note', Schemas.string({ optional: true })],
  ],
  { name: 'srv.public.t.Value', optional: true },
);
const envelopeSchema: Schema = Schemas.struct(
  [
    ['before', row],
    ['after', row],
    [
      'source',
      Schemas.struct([['table', Schemas.string()]], {
        name: 'io.debezium.connector.postgresql.Source',
      }),
    ],
    ['op', Schemas.string()],
    ['ts_ms', Schemas.int64({ optional: true })],
  ],
  { name: 'srv.public.t.Envelope' },
);
const keySchema = Schemas.struct([['pk', Schemas.int32()]], { name: 'srv.public.t.Key' });

/** The placeholders a key-only delete of pk 2 carries for the NOT NULL columns. */
const keyOnlyBefore = { pk: 2, cola: '', created: '', qty: 0, note: null };
const fullBefore = { pk: 2, cola: 'x', created: '2026-11-28T22:30:00Z', qty: 0, note: 'kept' };

/** What the Postgres connector puts on a delete whose NOT NULL columns hold placeholders. */
const keyOnlyMark = (names: string[]) => [{ key: BEFORE_PLACEHOLDERS_HEADER, value: names }];

function event(
  op: string,
  before: unknown,
  after: unknown,
  schemaless = false,
  placeholders: string[] = before === keyOnlyBefore ? ['cola', 'created', 'qty'] : [],
): SinkRecord {
  return {
    ...(placeholders.length > 0 ? { headers: keyOnlyMark(placeholders) } : {}),
    topic: 'srv.public.t',
    kafkaPartition: 0,
    kafkaOffset: 3,
    timestampType: 'CreateTime',
    keySchema: schemaless ? null : keySchema,
    key: { pk: 2 },
    valueSchema: schemaless ? null : envelopeSchema,
    value: { before, after, source: { table: 't' }, op, ts_ms: 1 },
    timestamp: 1,
  };
}

function unwrap(config: Record<string, string>) {
  const t = new ExtractNewRecordState();
  t.configure(config);
  return t;
}

const fieldShapes = (schema: Schema | null | undefined) =>
  schema?.fields?.map((f) => [f.name, f.schema.type, f.schema.optional === true]);

// Every configuration that rewrites deletes, the current key and the deprecated one.
const rewriteModes: Array<Record<string, string>> = [
  { 'delete.tombstone.handling.mode': 'rewrite' },
  { 'delete.tombstone.handling.mode': 'rewrite-with-tombstone' },
  { 'delete.handling.mode': 'rewrite' },
  { 'delete.handling.mode': 'rewrite', 'drop.tombstones': 'false' },
];

describe('ExtractNewRecordState rewriting deletes, as Debezium documents it', () => {
  it.each(rewriteModes)(
    'a key-only delete becomes {pk, null columns, __deleted: true} (%o)',
    (mode) => {
      const out = unwrap(mode).apply(event('d', keyOnlyBefore, null));
      expect(out?.value).toEqual({
        pk: 2,
        cola: null,
        created: null,
        qty: null,
        note: null,
        __deleted: true,
      });
      expect(fieldShapes(out?.valueSchema)).toEqual([
        ['pk', 'int32', false],
        ['cola', 'string', true],
        ['created', 'string', true],
        ['qty', 'int32', true],
        ['note', 'string', true],
        ['__deleted', 'boolean', true],
      ]);
      expect(out?.valueSchema?.fields?.[2]?.schema.name).toBe(ZONED_TIMESTAMP);
      expect(out?.key).toEqual({ pk: 2 });
    },
  );

  it('reads the placeholder header as a sink gets it through SimpleHeaderConverter (JSON text)', () => {
    const t = unwrap({ 'delete.tombstone.handling.mode': 'rewrite' });
    for (const value of ['["cola","created","qty"]', Buffer.from('["cola","created","qty"]')]) {
      const out = t.apply({
        ...event('d', keyOnlyBefore, null, false, []),
        headers: [{ key: BEFORE_PLACEHOLDERS_HEADER, value }],
      });
      expect(out?.value).toEqual({
        pk: 2,
        cola: null,
        created: null,
        qty: null,
        note: null,
        __deleted: true,
      });
    }
  });

  it('inserts and updates share the deletes’ schema, so a delete does not change the file’s schema', () => {
    const t = unwrap({ 'delete.tombstone.handling.mode': 'rewrite' });
    const insert = t.apply(event('c', null, fullBefore));
    const del = t.apply(event('d', keyOnlyBefore, null));
    expect(insert?.value).toEqual({ ...fullBefore, __deleted: false });
    expect(insert?.valueSchema).toBe(del?.valueSchema);
  });

  it('keeps the before image’s values when the delete carried the whole row (REPLICA IDENTITY FULL)', () => {
    const out = unwrap({ 'delete.tombstone.handling.mode': 'rewrite' }).apply(
      event('d', fullBefore, null),
    );
    expect(out?.value).toEqual({ ...fullBefore, __deleted: true });
  });

  it('a required column with a schema default is null in a marked key-only image', () => {
    const withDefault = Schemas.struct(
      [
        ['pk', Schemas.int32()],
        ['status', Schemas.string({ defaultValue: 'new' })],
      ],
      { name: 'srv.public.d.Value', optional: true },
    );
    const schema = Schemas.struct(
      [
        ['before', withDefault],
        ['after', withDefault],
        ['op', Schemas.string()],
      ],
      { name: 'srv.public.d.Envelope' },
    );
    const t = unwrap({ 'delete.tombstone.handling.mode': 'rewrite' });
    const record = (status: string) => ({
      ...event('d', null, null, false, ['status']),
      valueSchema: schema,
      value: { before: { pk: 2, status }, after: null, op: 'd' },
    });
    expect(t.apply(record('new'))?.value).toEqual({ pk: 2, status: null, __deleted: true });
  });

  it("Kafka's logical types holding the epoch and zero as placeholders are null in a marked key-only delete", () => {
    const typed = Schemas.struct(
      [
        ['pk', Schemas.int32()],
        ['day', Schemas.date()],
        ['at', Schemas.timestamp()],
        ['amount', Schemas.decimal(2)],
        ['raw', Schemas.bytes()],
        ['flag', Schemas.boolean()],
      ],
      { name: 'srv.public.l.Value', optional: true },
    );
    const schema = Schemas.struct(
      [
        ['before', typed],
        ['after', typed],
        ['op', Schemas.string()],
      ],
      { name: 'srv.public.l.Envelope' },
    );
    const before = {
      pk: 2,
      day: 0,
      at: 0,
      amount: new Uint8Array([0]),
      raw: new Uint8Array(0),
      flag: false,
    };
    const out = unwrap({ 'delete.tombstone.handling.mode': 'rewrite' }).apply({
      ...event('d', null, null, false, ['day', 'at', 'amount', 'raw', 'flag']),
      valueSchema: schema,
      value: { before, after: null, op: 'd' },
    });
    expect(out?.value).toEqual({
      pk: 2,
      day: null,
      at: null,
      amount: null,
      raw: null,
      flag: null,
      __deleted: true,
    });
  });

  it('keeps a whole before image whose columns equal the placeholders when it is not marked key-only', () => {
    const zeros = { pk: 2, cola: '', created: '', qty: 0, note: null };
    const out = unwrap({ 'delete.tombstone.handling.mode': 'rewrite' }).apply(
      event('d', zeros, null, false, []),
    );
    expect(out?.value).toEqual({ ...zeros, __deleted: true });
  });

  it('without a struct key it cannot tell the key columns and keeps the before image as it is', () => {
    const out = unwrap({ 'delete.tombstone.handling.mode': 'rewrite' }).apply({
      ...event('d', keyOnlyBefore, null),
      keySchema: Schemas.string(),
      key: '2',
    });
    expect(out?.value).toEqual({ ...keyOnlyBefore, __deleted: true });
    expect(out?.valueSchema?.fields?.[1]?.schema.optional).toBe(false);
  });

  it('schemaless envelopes get the same rows: nulls for a key-only delete, the values of a full one', () => {
    const t = unwrap({ 'delete.tombstone.handling.mode': 'rewrite' });
    const keyOnly = t.apply(event('d', keyOnlyBefore, null, true));
    expect(keyOnly?.value).toEqual({
      pk: 2,
      cola: null,
      created: null,
      qty: null,
      note: null,
      __deleted: true,
    });
    expect(keyOnly?.valueSchema).toBeNull();
    expect(t.apply(event('d', fullBefore, null, true))?.value).toEqual({
      ...fullBefore,
      __deleted: true,
    });
  });

  it.each<Record<string, string>>([
    { 'delete.tombstone.handling.mode': 'drop' },
    { 'delete.tombstone.handling.mode': 'tombstone' },
    { 'delete.tombstone.handling.mode': 'delete-to-tombstone' },
    { 'delete.handling.mode': 'none' },
  ])('modes that do not rewrite carry no row for a delete (%o)', (mode) => {
    const out = unwrap(mode).apply(event('d', keyOnlyBefore, null));
    expect(out === null || out.value === null).toBe(true);
  });
});

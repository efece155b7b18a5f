import { describe, expect, it } from 'vitest';
import { type Schema, Schemas, type SinkRecord } from '../../../../src/connect/api/index.ts';
import { ExtractNewRecordState } from '../../../../src/connect/transforms/extract-new-record-state.ts';

const row = Schemas.struct(
  [
    ['id', Schemas.int32()],
    ['name', Schemas.string({ optional: true })],
  ],
  { name: 'pg.public.users.Value', optional: true },
);
const source = Schemas.struct(
  [
    ['connector', Schemas.string()],
    ['lsn', Schemas.int64({ optional: true })],
    ['table', Schemas.string()],
  ],
  { name: 'io.debezium.connector.postgresql.Source' },
);
const envelope: Schema = Schemas.struct(
  [
    ['before', row],
    ['after', row],
    ['source', source],
    ['op', Schemas.string()],
    ['ts_ms', Schemas.int64({ optional: true })],
  ],
  { name: 'pg.public.users.Envelope' },
);

function event(op: string, before: unknown, after: unknown): SinkRecord {
  return {
    topic: 'pg.public.users',
    kafkaPartition: 0,
    kafkaOffset: 7,
    timestampType: 'CreateTime',
    keySchema: Schemas.struct([['id', Schemas.int32()]]),
    key: { id: 1 },
    valueSchema: envelope,
    value: {
      before,
      after,
      source: { connector: 'postgresql', lsn: 24023128, table: 'users' },
      op,
      ts_ms: 1700000000123,
    },
    timestamp: 1700000000000,
  };
}

const tombstone: SinkRecord = { ...event('d', null, null), value: null, valueSchema: null };

function smt(config: Record<string, string> = {}): ExtractNewRecordState {
  const t = new ExtractNewRecordState();
  t.configure(config);
  return t;
}

describe('ExtractNewRecordState', () => {
  it('replaces the envelope by the after row, keeping the row schema', () => {
    const out = smt().apply(event('u', { id: 1, name: 'a' }, { id: 1, name: 'b' }));
    expect(out?.value).toEqual({ id: 1, name: 'b' });
    expect(out?.valueSchema?.name).toBe('pg.public.users.Value');
    expect(out?.valueSchema?.fields?.map((f) => f.name)).toEqual(['id', 'name']);
    expect(out?.key).toEqual({ id: 1 });
  });

  it('adds op, ts_ms and source.lsn as __op, __ts_ms, __source_lsn', () => {
    const out = smt({ 'add.fields': 'op,ts_ms,source.lsn' }).apply(
      event('c', null, { id: 1, name: 'x' }),
    );
    expect(out?.value).toEqual({
      id: 1,
      name: 'x',
      __op: 'c',
      __ts_ms: 1700000000123,
      __source_lsn: 24023128,
    });
    expect(
      out?.valueSchema?.fields?.map((f) => [f.name, f.schema.type, f.schema.optional]),
    ).toEqual([
      ['id', 'int32', false],
      ['name', 'string', true],
      ['__op', 'string', true],
      ['__ts_ms', 'int64', true],
      ['__source_lsn', 'int64', true],
    ]);
  });

  it('keeps tombstones and drops delete events by default (tombstone mode)', () => {
    const t = smt();
    expect(t.apply(event('d', { id: 1, name: 'x' }, null))).toBeNull();
    expect(t.apply(tombstone)).toBe(tombstone);
  });

  it('rewrites deletes to the before row with __deleted=true and drops tombstones in rewrite mode', () => {
    const t = smt({ 'delete.tombstone.handling.mode': 'rewrite', 'add.fields': 'op' });
    expect(t.apply(event('d', { id: 1, name: 'x' }, null))?.value).toEqual({
      id: 1,
      name: 'x',
      __op: 'd',
      __deleted: true,
    });
    const update = t.apply(event('u', null, { id: 1, name: 'y' }));
    expect(update?.value).toEqual({ id: 1, name: 'y', __op: 'u', __deleted: false });
    expect(update?.valueSchema?.fields?.at(-1)?.schema).toEqual(
      Schemas.boolean({ optional: true }),
    );
    expect(t.apply(tombstone)).toBeNull();
  });

  it('keeps tombstones in rewrite-with-tombstone mode and drops both in drop mode', () => {
    expect(
      smt({ 'delete.tombstone.handling.mode': 'rewrite-with-tombstone' }).apply(tombstone),
    ).toBe(tombstone);
    const drop = smt({ 'delete.tombstone.handling.mode': 'drop' });
    expect(drop.apply(tombstone)).toBeNull();
    expect(drop.apply(event('d', { id: 1, name: 'x' }, null))).toBeNull();
  });

  it('turns a delete into a tombstone in delete-to-tombstone mode', () => {
    const out = smt({ 'delete.tombstone.handling.mode': 'delete-to-tombstone' }).apply(
      event('d', { id: 1, name: 'x' }, null),
    );
    expect(out).toMatchObject({ value: null, valueSchema: null, key: { id: 1 } });
  });

  it('honours the deprecated delete.handling.mode=rewrite with drop.tombstones=false', () => {
    const t = smt({ 'delete.handling.mode': 'rewrite', 'drop.tombstones': 'false' });
    expect(t.apply(tombstone)).toBe(tombstone);
    expect(t.apply(event('d', { id: 2, name: null }, null))?.value).toMatchObject({
      __deleted: true,
    });
  });

  it('passes records that are not change events through unchanged', () => {
    const heartbeat: SinkRecord = {
      ...event('c', null, null),
      valueSchema: Schemas.struct([['ts_ms', Schemas.int64()]]),
      value: { ts_ms: 1 },
    };
    expect(smt().apply(heartbeat)).toBe(heartbeat);
  });

  it('flattens schemaless envelopes too, and adds header metadata', () => {
    const record = { ...event('c', null, { id: 3, name: 'z' }), valueSchema: null };
    const out = smt({ 'add.fields': 'source.table:tbl', 'add.headers': 'op' }).apply(record);
    expect(out?.value).toEqual({ id: 3, name: 'z', tbl: 'users' });
    expect(out?.valueSchema).toBeNull();
    expect(out?.headers).toEqual([{ key: '__op', value: 'c', schema: null }]);
  });

  it('computes the flattened schema once per input schema', () => {
    const t = smt({ 'add.fields': 'op' });
    const a = t.apply(event('c', null, { id: 1, name: 'a' }));
    const b = t.apply(event('u', null, { id: 2, name: 'b' }));
    expect(a?.valueSchema).toBe(b?.valueSchema);
  });
});

/**
 * The Field partitioner against Confluent's own expectations. The expected folder
 * names are the ones Confluent documents for its FieldPartitioner in
 * kafka-connect-storage-common's FieldPartitionerTest (master, 12.0.x:
 * partitioner/src/test/java/io/confluent/connect/storage/partitioner/
 * FieldPartitionerTest.java) and its S3 sink changelog (12.0.0, CC-37115: dotted
 * names are paths into nested structs); each test names the case it mirrors.
 */
import { describe, expect, it } from 'vitest';
import {
  ManualClock,
  type Schema,
  Schemas,
  type SinkRecord,
} from '../../../src/connect/api/index.ts';
import { createPartitioner, PartitionerError } from '../partitioner.ts';
import { fieldNameProblem } from '../record-field-path.ts';
import { defaultPartitioner, sinkRecord, T0 } from './fixtures.ts';

/** Confluent's StorageSinkTestBase.createSchema() with the `string` field of createNewSchema(). */
const recordSchema = Schemas.struct([
  ['boolean', Schemas.boolean()],
  ['int', Schemas.int32()],
  ['long', Schemas.int64()],
  ['float', Schemas.float32()],
  ['double', Schemas.float64()],
  ['string', Schemas.string()],
]);
const recordValue = { boolean: true, int: 12, long: 12, float: 12.2, double: 12.2, string: 'def' };

function field(names: string[], dirDelim = '/') {
  return createPartitioner(
    {
      ...defaultPartitioner,
      className: 'io.confluent.connect.storage.partitioner.FieldPartitioner',
      fieldNames: names,
      dirDelim,
    },
    new ManualClock(T0),
  );
}

function typed(schema: Schema, value: unknown): SinkRecord {
  return sinkRecord('t', 0, 4, value, { valueSchema: schema });
}

describe('FieldPartitioner, as Confluent names its folders', () => {
  it('joins name=value levels in the listed order (testMultiPartition)', () => {
    const record = typed(recordSchema, recordValue);
    expect(field(['string', 'int']).encodePartition(record)).toBe('string=def/int=12');
    expect(field(['int', 'string']).encodePartition(record)).toBe('int=12/string=def');
  });

  it('joins the levels with directory.delim (testCustomDelimiterPartition)', () => {
    expect(field(['string', 'int'], '|').encodePartition(typed(recordSchema, recordValue))).toBe(
      'string=def|int=12',
    );
  });

  it('writes values as they are, without escaping (testStringPartition)', () => {
    const schema = Schemas.struct([['string', Schemas.string()]]);
    const p = field(['string']);
    // Confluent's expectation for "test/with\\special:chars=and+spaces" (a Java literal).
    expect(
      p.encodePartition(typed(schema, { string: 'test/with\\special:chars=and+spaces' })),
    ).toBe('string=test/with\\special:chars=and+spaces');
    expect(p.encodePartition(typed(schema, { string: '' }))).toBe('string=');
  });

  it('names a null value field=null (testNullPartition, testMultiPartitionWithNulls)', () => {
    const schema = Schemas.struct([
      ['string', Schemas.string({ optional: true })],
      ['int', Schemas.int32({ optional: true })],
      ['boolean', Schemas.boolean({ optional: true })],
    ]);
    expect(field(['string']).encodePartition(typed(schema, { string: null }))).toBe('string=null');
    expect(
      field(['string', 'int', 'boolean']).encodePartition(
        typed(schema, { string: 'def', int: null, boolean: null }),
      ),
    ).toBe('string=def/int=null/boolean=null');
  });

  it('prints booleans and INT8 to INT64 values (testBooleanPartition, testNumberPartition)', () => {
    expect(field(['boolean']).encodePartition(typed(recordSchema, recordValue))).toBe(
      'boolean=true',
    );
    const bool = Schemas.struct([['boolean', Schemas.boolean()]]);
    expect(field(['boolean']).encodePartition(typed(bool, { boolean: false }))).toBe(
      'boolean=false',
    );
    expect(field(['long']).encodePartition(typed(recordSchema, recordValue))).toBe('long=12');
    const ints = Schemas.struct([
      ['byte', Schemas.int8()],
      ['short', Schemas.int16()],
      ['big', Schemas.int64()],
    ]);
    expect(
      field(['byte', 'short', 'big']).encodePartition(
        typed(ints, { byte: 42, short: 1234, big: 9007199254740993n }),
      ),
    ).toBe('byte=42/short=1234/big=9007199254740993');
  });

  it('reaches nested struct fields through dotted names (testNested*Partition)', () => {
    const address = Schemas.struct([['city', Schemas.string({ optional: true })]], {
      optional: true,
    });
    const user = Schemas.struct([['address', address]]);
    const schema = Schemas.struct([['user', user]]);
    const p = field(['user.address.city']);
    expect(p.encodePartition(typed(schema, { user: { address: { city: 'NYC' } } }))).toBe(
      'user.address.city=NYC',
    );
    expect(p.encodePartition(typed(schema, { user: { address: { city: null } } }))).toBe(
      'user.address.city=null',
    );
    // testNestedMissingPartition: the optional struct on the way is null.
    expect(p.encodePartition(typed(schema, { user: { address: null } }))).toBe(
      'user.address.city=null',
    );
  });

  it('refuses FLOAT32, FLOAT64, ARRAY, BYTES values as errant records (testUnsupportedTypePartition)', () => {
    const record = typed(recordSchema, recordValue);
    for (const name of ['float', 'double']) {
      expect(() => field([name]).encodePartition(record)).toThrow(PartitionerError);
    }
    const schema = Schemas.struct([
      ['array', Schemas.array(Schemas.string())],
      ['amount', Schemas.decimal(2)],
    ]);
    const value = { array: ['item1', 'item2'], amount: new Uint8Array([4, 210]) };
    expect(() => field(['array']).encodePartition(typed(schema, value))).toThrow(
      /'array' of t-0@4 .*type ARRAY is not supported as a partition key/,
    );
    expect(() => field(['amount']).encodePartition(typed(schema, value))).toThrow(
      /type BYTES \(org.apache.kafka.connect.data.Decimal\) is not supported/,
    );
  });

  it('refuses a value that is not a struct as an errant record (testNotStructPartition)', () => {
    const p = field(['foo']);
    expect(() => p.encodePartition(typed(Schemas.string(), 'foo'))).toThrow(PartitionerError);
  });

  it('fails the task on a field the schema does not have, as Confluent does (testMissingFieldInSchemaThrows)', () => {
    const schema = Schemas.struct([['present', Schemas.string()]]);
    const error = (() => {
      try {
        field(['missing']).encodePartition(typed(schema, { present: 'value' }));
      } catch (e) {
        return e;
      }
    })();
    expect(error).not.toBeInstanceOf(PartitionerError);
    expect(error).toMatchObject({
      kind: 'connect',
      message: expect.stringMatching(/Field 'missing' is not present in the schema/),
    });
  });

  it("fails the task on Date, Time and Timestamp fields, which Confluent's cast cannot print", () => {
    const schema = Schemas.struct([['at', Schemas.timestamp()]]);
    expect(() => field(['at']).encodePartition(typed(schema, { at: T0 }))).toThrow(
      expect.objectContaining({ kind: 'connect' }),
    );
  });

  it('partitions schemaless JSON by the same type rules applied to its JSON types', () => {
    const p = field(['country', 'n', 'ok', 'source.db']);
    expect(
      p.encodePartition(
        sinkRecord('t', 0, 0, { country: 'a/b=c', n: 7, ok: false, source: { db: 'shop' } }),
      ),
    ).toBe('country=a/b=c/n=7/ok=false/source.db=shop');
    expect(p.encodePartition(sinkRecord('t', 0, 0, { country: null }))).toBe(
      'country=null/n=null/ok=null/source.db=null',
    );
    expect(() => p.encodePartition(sinkRecord('t', 0, 3, { n: 2.5 }))).toThrow(
      /'n' of t-0@3 is not a primitive.*a fractional number/,
    );
    expect(() => p.encodePartition(sinkRecord('t', 0, 7, 'text'))).toThrow(/t-0@7.*not a struct/);
  });

  it("validates field names as Confluent's PartitionFieldNameValidator does", () => {
    expect(fieldNameProblem('user.address.city')).toBeUndefined();
    expect(fieldNameProblem('a.')).toBeUndefined(); // Java's split drops the trailing part
    expect(fieldNameProblem(' ')).toMatch(/cannot be null or empty/);
    expect(fieldNameProblem('.a')).toMatch(/empty or whitespace-only path segment/);
    expect(fieldNameProblem('a. .b')).toMatch(/empty or whitespace-only path segment/);
  });
});

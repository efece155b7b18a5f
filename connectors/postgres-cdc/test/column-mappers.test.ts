import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ColumnMappers, type MappedColumn } from '../src/column-mappers.ts';
import { hasher, javaSerializedString } from '../src/masked-values.ts';

const t = { schema: 'public', table: 'customers' };
const TEXT: MappedColumn = { charType: true, stringValues: true, length: -1 };
const VARCHAR_10: MappedColumn = { charType: true, stringValues: true, length: 10 };
const UUID: MappedColumn = { charType: false, stringValues: true, length: -1 };
const INT: MappedColumn = { charType: false, stringValues: false, length: -1 };

function mappers(config: Record<string, string>): ColumnMappers {
  const { mappers, errors } = ColumnMappers.fromConfig(config);
  expect(errors).toEqual([]);
  return mappers;
}

/**
 * Debezium's hashing, written out from its documentation and MaskStrings independently
 * of masked-values.ts: hex(digest(salt ‖ bytes)), v1's bytes being Java's serialization
 * of the String (for ASCII text: AC ED 00 05, 0x74, 2-byte length, the characters).
 */
function debeziumHash(algorithm: string, salt: string, value: string, v: 'v1' | 'v2'): string {
  const text = Buffer.from(value, 'ascii');
  const length = Buffer.from([text.length >> 8, text.length & 0xff]);
  const bytes = v === 'v2' ? text : Buffer.concat([Buffer.from('aced000574', 'hex'), length, text]);
  return createHash(algorithm).update(Buffer.from(salt)).update(bytes).digest('hex');
}

describe("Debezium's hashing (no database)", () => {
  // MaskStringsTest in Debezium: salt "salt".
  it.each([
    ['sha256', 'v1', 'hello', 'af5843a0f0e728ab0332c8888b6e1190bfb79e584f0d40538de8f10df6ef29c6'],
    ['sha256', 'v1', 'world', '4588e1f2dcdc7fefc1515d3acd5acb9033478eace68286f383c337b9ff4464a3'],
    ['md5', 'v1', 'hello', '46f48a7a5ea32efba87cbff49d46d35a'],
    ['md5', 'v1', 'world', '030f632140d9c9591b0d8c21098024b8'],
    ['sha256', 'v2', 'hello', 'cd31b3b98ece60cb739c0bf770b2de892ae0ad133f645513c3d83f08757a843a'],
    ['sha256', 'v2', 'world', 'e84ac3142870113ddc6710c06f76421befc8e8ca6de64e98d2993ed8d41f4085'],
    ['md5', 'v2', 'hello', '06decc8b095724f80103712c235586be'],
    ['md5', 'v2', 'world', '172c8e95398cc72ab5358ead6981e7e5'],
  ] as const)(
    '%s %s of %s equals the vector of Debezium’s own tests',
    (digest, v, value, expected) => {
      expect(hasher(digest, 'salt', v)(value)).toBe(expected);
      expect(debeziumHash(digest, 'salt', value, v)).toBe(expected);
    },
  );

  it("serializes strings as Java's ObjectOutputStream does: modified UTF-8, NUL and astral characters included", () => {
    expect(javaSerializedString('é\u0000😀').toString('hex')).toBe(
      // header, TC_STRING, length 10, é (c3 a9), NUL (c0 80), 😀 as two 3-byte surrogates
      `aced000574000ac3a9c080eda0bdedb880`,
    );
    const long = 'x'.repeat(70_000);
    const bytes = javaSerializedString(long);
    expect(bytes.subarray(0, 13).toString('hex')).toBe('aced00057c0000000000011170');
    expect(bytes.length).toBe(13 + 70_000);
  });
});

describe('column.mask.*, column.truncate.* on columns (no database)', () => {
  it('masks a text column with N asterisks, a null too, and marks the schema masked', () => {
    const m = mappers({ 'column.mask.with.5.chars': 'public.customers.email' });
    const email = m.forColumn(t, 'email', TEXT);

    expect(email?.apply('annek@noanswer.org')).toBe('*****');
    expect(email?.apply(null)).toBe('*****');
    expect(email?.parameters).toEqual({ masked: 'true' });
    expect(m.forColumn(t, 'name', TEXT)).toBeNull();
  });

  it('leaves columns that are not of a character type as they are', () => {
    const m = mappers({
      'column.mask.with.5.chars': 'public.customers.*',
      'column.mask.hash.SHA-256.with.salt.s': 'public.other.*',
    });

    expect(m.forColumn(t, 'id', INT)).toBeNull();
    expect(m.forColumn(t, 'token', UUID)).toBeNull();
    expect(m.forColumn({ schema: 'public', table: 'other' }, 'token', UUID)).toBeNull();
  });

  it('truncates strings longer than N, any string value, and not a varchar(n) with n <= N', () => {
    const m = mappers({ 'column.truncate.to.4.chars': 'public.customers.(name|token|code)' });

    expect(m.forColumn(t, 'name', TEXT)?.apply('Kretchmar')).toBe('Kret');
    expect(m.forColumn(t, 'name', TEXT)?.apply('Ann')).toBe('Ann');
    expect(m.forColumn(t, 'name', TEXT)?.apply(null)).toBeNull();
    expect(m.forColumn(t, 'name', TEXT)?.parameters).toEqual({ truncateLength: '4' });
    expect(m.forColumn(t, 'token', UUID)?.apply('0e4b8a7c-0000')).toBe('0e4b');
    expect(m.forColumn(t, 'code', { ...VARCHAR_10, length: 4 })).toBeNull();
    expect(m.forColumn(t, 'code', INT)).toBeNull();
  });

  it('hashes with the salt and algorithm of the key, v1 by default, v2 by key or by strategy version', () => {
    const v1 = mappers({
      'column.mask.hash.SHA-256.with.salt.CzQMA0cB5K': 'public.customers.email',
    });
    const v2 = mappers({
      'column.mask.hash.v2.SHA-256.with.salt.CzQMA0cB5K': 'public.customers.email',
    });
    const byVersion = mappers({
      'column.mask.hash.sha-256.with.salt.CzQMA0cB5K': 'public.customers.email',
      'column.mask.hash.hashing.strategy.version': 'V2',
    });
    const value = 'annek@noanswer.org';

    expect(v1.forColumn(t, 'email', TEXT)?.apply(value)).toBe(
      debeziumHash('sha256', 'CzQMA0cB5K', value, 'v1'),
    );
    expect(v2.forColumn(t, 'email', TEXT)?.apply(value)).toBe(
      debeziumHash('sha256', 'CzQMA0cB5K', value, 'v2'),
    );
    expect(byVersion.forColumn(t, 'email', TEXT)?.apply(value)).toBe(
      debeziumHash('sha256', 'CzQMA0cB5K', value, 'v2'),
    );
    expect(v1.forColumn(t, 'email', TEXT)?.apply(null)).toBeNull();
    expect(v1.forColumn(t, 'email', TEXT)?.parameters).toEqual({ masked: 'true' });
  });

  it("cuts a hash to the column's length, as Debezium does for varchar(n)", () => {
    const m = mappers({ 'column.mask.hash.MD5.with.salt.salt': 'public.customers.code' });

    expect(m.forColumn(t, 'code', VARCHAR_10)?.apply('hello')).toBe('46f48a7a5e');
  });

  it('applies the first matching mapper only: truncation, then masks, then hashes', () => {
    const m = mappers({
      'column.mask.hash.MD5.with.salt.salt': 'public.customers.email',
      'column.mask.with.3.chars': 'public.customers.email',
      'column.truncate.to.2.chars': 'public.customers.email',
    });

    expect(m.forColumn(t, 'email', TEXT)?.apply('hello')).toBe('he');
  });

  it('matches several comma-separated regexes against the whole column name, case-insensitively', () => {
    const m = mappers({ 'column.mask.with.2.chars': 'public.customers.a, PUBLIC.Customers.b' });

    expect(m.forColumn(t, 'a', TEXT)?.apply('x')).toBe('**');
    expect(m.forColumn(t, 'b', TEXT)?.apply('x')).toBe('**');
    expect(m.forColumn(t, 'ab', TEXT)).toBeNull();
  });

  it.each([
    ['column.mask.hash.WHIRLPOOL.with.salt.s', 'public.t.c', /not a hash algorithm/],
    ['column.truncate.to.0.chars', 'public.t.c', /positive/],
    ['column.mask.with.3.chars', 'public.(t.c', /not a valid regular expression/],
    ['column.mask.with.3.chars', ' ', /must list the columns/],
    ['column.mask.hash.hashing.strategy.version', 'v3', /v1, v2/],
  ])('refuses %s=%j naming the key', (key, value, message) => {
    const { errors } = ColumnMappers.fromConfig({ [key]: value });

    expect(errors).toEqual([{ key, value, message: expect.stringMatching(message) }]);
  });
});

import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/connect/api/index.ts';
import {
  mappingModes,
  postgresCdcConfigDefs,
  readSettings,
  validateCombinations,
} from '../src/connector-config.ts';
import { UNSUPPORTED_KEYS } from '../src/unsupported-keys.ts';

const minimal = {
  'database.hostname': 'db',
  'database.user': 'u',
  'database.dbname': 'inventory',
  'topic.prefix': 'dbserver1',
};

const TYPE_KEYS = [
  'interval.handling.mode',
  'binary.handling.mode',
  'hstore.handling.mode',
  'money.fraction.digits',
  'column.propagate.source.type',
  'datatype.propagate.source.type',
];

describe("Debezium's type mapping keys", () => {
  it("defaults to Debezium's: numeric intervals, bytes, json hstore, 2 money fraction digits, no propagation", () => {
    const parsed = parseConfig(postgresCdcConfigDefs, minimal);
    expect(parsed.errors).toEqual([]);
    expect(mappingModes(readSettings(parsed.values))).toEqual({
      decimalHandlingMode: 'precise',
      timePrecisionMode: 'adaptive',
      includeUnknownDatatypes: false,
      intervalHandlingMode: 'numeric',
      binaryHandlingMode: 'bytes',
      hstoreHandlingMode: 'json',
      moneyFractionDigits: 2,
      propagateSourceType: undefined,
      // Debezium's naming defaults: no adjustment of schema or field names.
      names: expect.objectContaining({
        fieldMode: 'none',
        schemas: expect.objectContaining({ mode: 'none' }),
      }),
    });
  });

  it('reads every value Debezium has, in any case, and compiles the propagation lists', () => {
    for (const tpm of [
      'ADAPTIVE',
      'adaptive_time_microseconds',
      'Connect',
      'ISOSTRING',
      'microseconds',
      'NanoSeconds',
    ]) {
      const parsed = parseConfig(postgresCdcConfigDefs, { ...minimal, 'time.precision.mode': tpm });
      expect(parsed.errors).toEqual([]);
      expect(readSettings(parsed.values).timePrecisionMode).toBe(tpm.toLowerCase());
    }
    const parsed = parseConfig(postgresCdcConfigDefs, {
      ...minimal,
      'interval.handling.mode': 'STRING',
      'binary.handling.mode': 'Base64-URL-Safe',
      'hstore.handling.mode': 'MAP',
      'money.fraction.digits': '4',
      'column.propagate.source.type': 'public\\.t\\.c,other\\..*',
      'datatype.propagate.source.type': '.+\\.varchar',
    });
    expect(parsed.errors).toEqual([]);
    const modes = mappingModes(readSettings(parsed.values));
    expect(modes).toMatchObject({
      intervalHandlingMode: 'string',
      binaryHandlingMode: 'base64-url-safe',
      hstoreHandlingMode: 'map',
      moneyFractionDigits: 4,
    });
    const { columns, datatypes } = modes.propagateSourceType ?? { columns: [], datatypes: [] };
    expect(columns.map((r) => r.test('PUBLIC.T.C'))).toEqual([true, false]);
    expect(columns[0].test('public.t.cc')).toBe(false);
    expect(datatypes[0].test('public.t.VARCHAR')).toBe(true);
  });

  it.each([
    ['time.precision.mode', 'structured'],
    ['interval.handling.mode', 'iso'],
    ['binary.handling.mode', 'base32'],
    ['hstore.handling.mode', 'text'],
    ['money.fraction.digits', '-1'],
  ])('refuses %s=%s by name', (key, value) => {
    const parsed = parseConfig(postgresCdcConfigDefs, { ...minimal, [key]: value });
    expect(parsed.errors.map((e) => e.key)).toEqual([key]);
  });

  it('refuses a propagation pattern that is not a regular expression', () => {
    const parsed = parseConfig(postgresCdcConfigDefs, {
      ...minimal,
      'datatype.propagate.source.type': '(',
    });
    expect(validateCombinations(parsed.values).map((e) => e.key)).toEqual([
      'datatype.propagate.source.type',
    ]);
  });

  it('no longer lists them among the keys refused as not implemented', () => {
    for (const key of TYPE_KEYS) expect(UNSUPPORTED_KEYS).not.toContain(key);
  });
});

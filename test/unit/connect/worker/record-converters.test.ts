import { describe, expect, it } from 'vitest';
import { Schemas } from '../../../../src/connect/api/index.ts';
import { createRecordConverters } from '../../../../src/connect/runtime/record-converters.ts';
import { testRegistry } from './plugin-fixtures.ts';

const worker = {
  'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
  'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
  'key.converter.schemas.enable': true,
  'value.converter.schemas.enable': false,
  'header.converter': 'org.apache.kafka.connect.storage.SimpleHeaderConverter',
};

describe('record converters', () => {
  it("use the worker's converters with the worker's prefixed keys", () => {
    const c = createRecordConverters(testRegistry(), worker, {});
    expect(c.value.fromConnectData('t', null, { a: 1 })?.toString()).toBe('{"a":1}');
    expect(c.key.fromConnectData('t', Schemas.string(), 'k')?.toString()).toBe(
      '{"schema":{"type":"string","optional":false},"payload":"k"}',
    );
  });

  it("let a connector override a converter, configured with the connector's keys", () => {
    const c = createRecordConverters(testRegistry(), worker, {
      'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'value.converter.schemas.enable': 'true',
      'key.converter': 'StringConverter',
    });
    expect(c.value.fromConnectData('t', Schemas.int32(), 5)?.toString()).toBe(
      '{"schema":{"type":"int32","optional":false},"payload":5}',
    );
    expect(c.key.fromConnectData('t', Schemas.string(), 'plain')?.toString()).toBe('plain');
    expect(c.keyClass).toBe('StringConverter');
  });

  it('round-trip header values through the simple header converter', () => {
    const c = createRecordConverters(testRegistry(), worker, {});
    const bytes = c.header.toBytes('t', { key: 'h', value: 'text' });
    expect(bytes?.toString()).toBe('text');
    expect(c.header.toHeader('t', 'h', bytes).value).toBe('text');
    expect(c.header.toBytes('t', { key: 'n', value: { a: [1, 2] } })?.toString()).toBe(
      '{"a":[1,2]}',
    );
  });

  it('refuse an unknown converter class, naming the key', () => {
    expect(() =>
      createRecordConverters(testRegistry(), worker, { 'value.converter': 'NoSuch' }),
    ).toThrow(/value\.converter: Class NoSuch could not be found/);
  });
});

import { describe, expect, it } from 'vitest';
import { DataException, pluginNames, Schemas } from '../../../../src/connect/api/index.ts';
import { ByteArrayConverter } from '../../../../src/connect/converters/byte-array-converter.ts';
import { converterPlugins } from '../../../../src/connect/converters/index.ts';
import { StringConverter } from '../../../../src/connect/converters/string-converter.ts';

describe('StringConverter', () => {
  it('writes text as UTF-8 and reads it back as an optional string', () => {
    const c = new StringConverter();
    c.configure({}, false);
    const bytes = c.fromConnectData('t', Schemas.string(), 'héllo');
    expect(bytes).toEqual(Buffer.from('héllo', 'utf8'));
    expect(c.toConnectData('t', bytes)).toEqual({
      schema: Schemas.string({ optional: true }),
      value: 'héllo',
    });
  });

  it('writes numbers as their text, null as null, and honours converter.encoding', () => {
    const c = new StringConverter();
    c.configure({ 'converter.encoding': 'ISO-8859-1' }, true);
    expect(c.fromConnectData('t', Schemas.int64(), 12345678901234567890n)).toEqual(
      Buffer.from('12345678901234567890'),
    );
    expect(c.fromConnectData('t', null, null)).toBeNull();
    expect(c.fromConnectData('t', null, 'é')).toEqual(Buffer.from([0xe9]));
  });
});

describe('ByteArrayConverter', () => {
  it('passes bytes through both ways and refuses other values', () => {
    const c = new ByteArrayConverter();
    c.configure({}, false);
    const raw = Buffer.from([0, 1, 255]);
    expect(c.fromConnectData('t', Schemas.bytes(), raw)).toBe(raw);
    expect(c.toConnectData('t', raw).value).toEqual(raw);
    expect(c.fromConnectData('t', null, null)).toBeNull();
    expect(() => c.fromConnectData('t', null, 'text')).toThrow(DataException);
    expect(() => c.fromConnectData('t', Schemas.string(), raw)).toThrow(DataException);
  });
});

describe('converter plugins', () => {
  it("answer to Kafka Connect's class names", () => {
    const names = converterPlugins.flatMap(pluginNames);
    expect(names).toEqual(
      expect.arrayContaining([
        'org.apache.kafka.connect.json.JsonConverter',
        'org.apache.kafka.connect.storage.StringConverter',
        'org.apache.kafka.connect.converters.ByteArrayConverter',
        'JsonConverter',
        'Json',
      ]),
    );
  });
});

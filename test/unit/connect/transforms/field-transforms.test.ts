import { describe, expect, it } from 'vitest';
import {
  ConfigException,
  DataException,
  pluginNames,
  Schemas,
  type SinkRecord,
  type SourceRecord,
} from '../../../../src/connect/api/index.ts';
import { transformPlugins } from '../../../../src/connect/transforms/index.ts';
import { InsertField } from '../../../../src/connect/transforms/insert-field.ts';
import {
  HasHeaderKey,
  RecordIsTombstone,
  TopicNameMatches,
} from '../../../../src/connect/transforms/predicates.ts';
import { RegexRouter } from '../../../../src/connect/transforms/regex-router.ts';
import { ReplaceField } from '../../../../src/connect/transforms/replace-field.ts';

const valueSchema = Schemas.struct(
  [
    ['id', Schemas.int64()],
    ['email', Schemas.string({ optional: true })],
    ['secret', Schemas.string()],
  ],
  { name: 'user', version: 2 },
);

const sink: SinkRecord = {
  topic: 'pg.public.users',
  kafkaPartition: 3,
  kafkaOffset: 42,
  timestampType: 'CreateTime',
  timestamp: 1700000000000,
  valueSchema,
  value: { id: 1, email: 'a@b', secret: 's' },
};

const source: SourceRecord = {
  topic: 'lines',
  sourcePartition: { filename: 'x' },
  sourceOffset: { position: 3 },
  value: { line: 'hello' },
};

describe('RegexRouter', () => {
  it('rewrites a topic that matches as a whole, with Java-style group references', () => {
    const t = new RegexRouter();
    t.configure({
      regex: '(\\w+)\\.public\\.(\\w+)',
      replacement: 'cdc-$1-$2',
    });
    expect(t.apply(sink)?.topic).toBe('cdc-pg-users');
    expect(t.apply({ ...sink, topic: 'x.pg.public.users.y' })?.topic).toBe('x.pg.public.users.y');
  });

  it('supports named groups written the Java way, dollar-brace-name', () => {
    const t = new RegexRouter();
    t.configure({
      regex: '(?<db>\\w+)\\.public\\.(?<table>\\w+)',
      replacement: '$' + '{table}_$' + '{db}',
    });
    expect(t.apply(sink)?.topic).toBe('users_pg');
  });

  it('refuses a missing replacement with the key named', () => {
    expect(() => new RegexRouter().configure({ regex: 'a' })).toThrow(ConfigException);
  });
});

describe('InsertField', () => {
  it('appends topic, partition, offset, timestamp and a static field to a struct', () => {
    const t = new InsertField('value');
    t.configure({
      'topic.field': 'kafka_topic!',
      'partition.field': 'kafka_partition',
      'offset.field': 'kafka_offset',
      'timestamp.field': 'ts',
      'static.field': 'origin',
      'static.value': 'dc1',
    });
    const out = t.apply(sink);
    expect(out?.value).toEqual({
      id: 1,
      email: 'a@b',
      secret: 's',
      kafka_topic: 'pg.public.users',
      kafka_partition: 3,
      kafka_offset: 42,
      ts: 1700000000000,
      origin: 'dc1',
    });
    const fields = out?.valueSchema?.fields
      ?.slice(3)
      .map((f) => [f.name, f.schema.type, f.schema.optional]);
    expect(fields).toEqual([
      ['kafka_topic', 'string', false],
      ['kafka_partition', 'int32', true],
      ['kafka_offset', 'int64', true],
      ['ts', 'int64', true],
      ['origin', 'string', true],
    ]);
    expect(out?.valueSchema).toMatchObject({ name: 'user', version: 2 });
  });

  it('inserts into schemaless maps and lets tombstones through', () => {
    const t = new InsertField('value');
    t.configure({ 'topic.field': 'topic' });
    expect(t.apply(source)?.value).toEqual({ line: 'hello', topic: 'lines' });
    const tombstone = { ...sink, value: null };
    expect(t.apply(tombstone)).toBe(tombstone);
  });

  it('refuses an offset field on source records', () => {
    const t = new InsertField('value');
    t.configure({ 'offset.field': 'o' });
    expect(() => t.apply(source)).toThrow(DataException);
  });
});

describe('ReplaceField', () => {
  it('excludes and renames struct fields, keeping the schema identity', () => {
    const t = new ReplaceField('value');
    t.configure({ exclude: 'secret', renames: 'email:mail' });
    const out = t.apply(sink);
    expect(out?.value).toEqual({ id: 1, mail: 'a@b' });
    expect(out?.valueSchema?.fields?.map((f) => f.name)).toEqual(['id', 'mail']);
    expect(out?.valueSchema?.name).toBe('user');
  });

  it('keeps only included fields, also under the old whitelist key', () => {
    const t = new ReplaceField('value');
    t.configure({ whitelist: 'id' });
    expect(t.apply(sink)?.value).toEqual({ id: 1 });
    const key = new ReplaceField('key');
    key.configure({ include: 'line' });
    expect(key.apply({ ...source, key: { line: 'k', other: 1 } })?.key).toEqual({ line: 'k' });
  });
});

describe('predicates', () => {
  it('match topic names, header keys and tombstones', () => {
    const topic = new TopicNameMatches();
    topic.configure({ pattern: 'pg\\..*' });
    expect(topic.test(sink)).toBe(true);
    expect(topic.test(source)).toBe(false);
    const header = new HasHeaderKey();
    header.configure({ name: 'h' });
    expect(header.test({ ...source, headers: [{ key: 'h', value: 1 }] })).toBe(true);
    expect(new RecordIsTombstone().test({ ...sink, value: null })).toBe(true);
  });
});

describe('transform plugins', () => {
  it('answer to Kafka and Debezium class names', () => {
    const names = transformPlugins.flatMap(pluginNames);
    expect(names).toEqual(
      expect.arrayContaining([
        'org.apache.kafka.connect.transforms.RegexRouter',
        'org.apache.kafka.connect.transforms.InsertField$Value',
        'org.apache.kafka.connect.transforms.ReplaceField$Key',
        'io.debezium.transforms.ExtractNewRecordState',
        'org.apache.kafka.connect.transforms.predicates.TopicNameMatches',
      ]),
    );
  });
});

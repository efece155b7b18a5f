/**
 * Topic, schema and field names as Debezium's topic naming strategies and name
 * adjusters make them (topic-naming.ts, name-adjustment.ts), and the config keys that
 * choose them: accepted with Debezium's values, refused by name otherwise.
 */
import { describe, expect, it } from 'vitest';
import { type ConnectorConfig, parseConfig } from '../../../src/connect/api/index.ts';
import { postgresCdcConfigDefs, readSettings } from '../src/connector-config.ts';
import { adjustFieldName, NameConflictError, SchemaNameAdjuster } from '../src/name-adjustment.ts';
import {
  DEFAULT_TOPIC_NAMING_STRATEGY,
  SCHEMA_TOPIC_NAMING_STRATEGY,
  sanitizedTopicName,
  TOPIC_NAMING_DEFAULTS,
  TopicNaming,
} from '../src/topic-naming.ts';
import { baseConfig as base, connectorErrors } from './config-support.ts';

/** Per-key parse errors and the connector's validate() errors, as messages by key. */
function errorsFor(extra: ConnectorConfig): Record<string, string> {
  const parsed = parseConfig(postgresCdcConfigDefs, { ...base, ...extra });
  const errors = [...parsed.errors, ...connectorErrors(parsed.values)];
  return Object.fromEntries(errors.map((e) => [e.key, e.message]));
}

function settings(extra: ConnectorConfig) {
  const parsed = parseConfig(postgresCdcConfigDefs, { ...base, ...extra });
  expect(parsed.errors).toEqual([]);
  return readSettings(parsed.values);
}

const naming = (over: Partial<typeof TOPIC_NAMING_DEFAULTS> = {}) =>
  new TopicNaming({ prefix: 'srv', ...TOPIC_NAMING_DEFAULTS, ...over });
const orders = { schema: 'sales', table: 'orders' };

describe('topic naming strategies', () => {
  it('SchemaTopicNamingStrategy, the default, names <prefix>.<schema>.<table>', () => {
    expect(TOPIC_NAMING_DEFAULTS.strategy).toBe(SCHEMA_TOPIC_NAMING_STRATEGY);
    expect(naming().dataChangeTopic(orders)).toBe('srv.sales.orders');
  });

  it('DefaultTopicNamingStrategy names <prefix>.<table>: a Postgres table id has no catalog', () => {
    expect(naming({ strategy: DEFAULT_TOPIC_NAMING_STRATEGY }).dataChangeTopic(orders)).toBe(
      'srv.orders',
    );
  });

  it('topic.delimiter joins the parts of data change, heartbeat and transaction topics', () => {
    const n = naming({ delimiter: '_', heartbeatPrefix: 'hb', transaction: 'tx' });
    expect(n.dataChangeTopic(orders)).toBe('srv_sales_orders');
    expect(n.heartbeatTopic()).toBe('hb_srv');
    expect(n.transactionTopic()).toBe('srv_tx');
    expect(naming().heartbeatTopic()).toBe('__debezium-heartbeat.srv');
    expect(naming().transactionTopic()).toBe('srv.transaction');
  });

  it('replaces characters Kafka refuses in data change topics with "_", and tells of it', () => {
    const n = naming();
    const told: string[] = [];
    n.onSanitized = (proposed, topic) => told.push(`${proposed} -> ${topic}`);
    expect(n.dataChangeTopic({ schema: 'public', table: 'my table$ü' })).toBe(
      'srv.public.my_table__',
    );
    expect(told).toEqual(['srv.public.my table$ü -> srv.public.my_table__']);
    expect(sanitizedTopicName('x'.repeat(300))).toHaveLength(249);
    expect(sanitizedTopicName('..')).toBe('__');
  });

  it('topic.cache.size bounds the names remembered, and a forgotten name is made the same again', () => {
    const n = naming({ cacheSize: 1 });
    const told: string[] = [];
    n.onSanitized = (proposed) => told.push(proposed);
    const a = { schema: 'public', table: 'a b' };
    expect(n.dataChangeTopic(a)).toBe('srv.public.a_b');
    expect(n.dataChangeTopic(a)).toBe('srv.public.a_b');
    expect(told).toHaveLength(1);
    n.dataChangeTopic({ schema: 'public', table: 'other' });
    expect(n.dataChangeTopic(a)).toBe('srv.public.a_b');
    expect(told).toHaveLength(2);
  });
});

describe('schema and field name adjustment', () => {
  it('avro replaces invalid characters with "_", keeping a leading digit; field names lose dots too', () => {
    const schemas = new SchemaNameAdjuster('avro');
    expect(schemas.adjust('srv.public.my-table.Value')).toBe('srv.public.my_table.Value');
    expect(schemas.adjust('1srv.t.Key')).toBe('_1srv.t.Key');
    expect(adjustFieldName('avro', 'unit-price €')).toBe('unit_price__');
    expect(adjustFieldName('avro', '2nd')).toBe('_2nd');
    expect(adjustFieldName('avro', 'a.b')).toBe('a_b');
    expect(adjustFieldName('avro', 'fine_name1')).toBe('fine_name1');
  });

  it('avro_unicode escapes each invalid character, "_" included, as _uXXXX', () => {
    expect(adjustFieldName('avro_unicode', 'unit-price')).toBe('unit_u002dprice');
    expect(adjustFieldName('avro_unicode', 'a_b')).toBe('a_u005fb');
    expect(adjustFieldName('avro_unicode', '2nd')).toBe('_u0032nd');
    expect(adjustFieldName('avro_unicode', 'é')).toBe('_u00e9');
    // Java's toHexString: three hex digits are not padded.
    expect(adjustFieldName('avro_unicode', 'α')).toBe('_u3b1');
    expect(new SchemaNameAdjuster('avro_unicode').adjust('srv.public.my-t.Value')).toBe(
      'srv.public.my_u002dt.Value',
    );
  });

  it('none leaves names as they are', () => {
    expect(adjustFieldName('none', 'unit-price €')).toBe('unit-price €');
    expect(new SchemaNameAdjuster('none').adjust('srv.public.my-t.Value')).toBe(
      'srv.public.my-t.Value',
    );
  });

  it('refuses two schema names adjusted to one, as Debezium does', () => {
    const schemas = new SchemaNameAdjuster('avro');
    schemas.adjust('srv.public.a-b.Value');
    expect(schemas.adjust('srv.public.a-b.Value')).toBe('srv.public.a_b.Value');
    expect(() => schemas.adjust('srv.public.a$b.Value')).toThrow(NameConflictError);
  });
});

describe('naming config keys', () => {
  it('accepts the keys Debezium defines for topic and name shaping (once refused as not supported yet)', () => {
    expect(
      errorsFor({
        'topic.naming.strategy': DEFAULT_TOPIC_NAMING_STRATEGY,
        'topic.delimiter': '_',
        'topic.heartbeat.prefix': 'beats',
        'topic.cache.size': '50',
        'schema.name.adjustment.mode': 'AVRO',
        'field.name.adjustment.mode': 'Avro_Unicode',
        'publish.via.partition.root': 'true',
      }),
    ).toEqual({});
    const s = settings({
      'topic.delimiter': '_',
      'topic.heartbeat.prefix': 'beats',
      'schema.name.adjustment.mode': 'AVRO',
      'field.name.adjustment.mode': 'Avro_Unicode',
      'publish.via.partition.root': 'true',
    });
    expect(s.names.topics.heartbeatTopic()).toBe('beats_one');
    expect(s.names.schemas.mode).toBe('avro');
    expect(s.names.fieldMode).toBe('avro_unicode');
    expect(s.publishViaPartitionRoot).toBe(true);
  });

  it('keeps Debezium defaults when the keys are absent', () => {
    const s = settings({});
    expect(s.names.topics.dataChangeTopic(orders)).toBe('one.sales.orders');
    expect(s.names.topics.heartbeatTopic()).toBe('__debezium-heartbeat.one');
    expect(s.names.schemas.mode).toBe('none');
    expect(s.names.fieldMode).toBe('none');
    expect(s.publishViaPartitionRoot).toBe(false);
  });

  it('refuses another topic naming strategy class by name', () => {
    expect(errorsFor({ 'topic.naming.strategy': 'com.acme.MyStrategy' })).toEqual({
      'topic.naming.strategy': expect.stringContaining(
        'not supported: com.acme.MyStrategy is a Java class this connector cannot load',
      ),
    });
  });

  it('refuses topic parts Kafka would refuse and unknown adjustment modes', () => {
    const errors = errorsFor({
      'topic.delimiter': '/',
      'topic.heartbeat.prefix': 'beats here',
      'schema.name.adjustment.mode': 'avro2',
    });
    expect(Object.keys(errors).sort()).toEqual([
      'schema.name.adjustment.mode',
      'topic.delimiter',
      'topic.heartbeat.prefix',
    ]);
  });

  it('refuses heartbeat.topics.prefix, which Debezium 2.x no longer reads, unless it is the default', () => {
    expect(errorsFor({ 'heartbeat.topics.prefix': 'beats' })).toEqual({
      'heartbeat.topics.prefix': expect.stringContaining(
        'not supported: heartbeat.topics.prefix; Debezium 2.x names heartbeat topics by topic.heartbeat.prefix',
      ),
    });
    expect(errorsFor({ 'heartbeat.topics.prefix': '__debezium-heartbeat' })).toEqual({});
  });
});

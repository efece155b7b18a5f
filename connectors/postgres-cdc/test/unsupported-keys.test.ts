import { describe, expect, it } from 'vitest';
import { type ConnectorConfig, parseConfig } from '../../../src/connect/api/index.ts';
import { postgresCdcConfigDefs, readSettings } from '../src/connector-config.ts';
import { PostgresCdcSourceConnector } from '../src/postgres-cdc-connector.ts';
import { UNSUPPORTED_KEYS } from '../src/unsupported-keys.ts';
import {
  baseConfig as base,
  connectorErrors,
  runtimeValidationMessages,
} from './config-support.ts';

/** The connector's validate() errors for `base` plus `extra`, as the runtime calls it. */
function validate(extra: ConnectorConfig) {
  const parsed = parseConfig(postgresCdcConfigDefs, { ...base, ...extra });
  expect(parsed.errors).toEqual([]);
  return connectorErrors(parsed.values);
}

/** A concrete key for a documented one: placeholders filled in. */
function concrete(name: string): string {
  return name
    .replace('<N>', '12')
    .replace('<algo>', 'SHA-256')
    .replace('<salt>', 'CzQMA0cB5K')
    .replace('*', 'public.orders');
}

describe('Debezium keys the connector does not implement', () => {
  it.each(UNSUPPORTED_KEYS.map((k) => [concrete(k)]))('refuses %s by name', (key) => {
    const errors = validate({ [key]: 'something' });

    expect(errors).toEqual([
      {
        key,
        value: 'something',
        message: expect.stringMatching(`^not supported: ${key.replace(/[.*]/g, '\\$&')}; `),
      },
    ]);
  });

  it.each([
    ['openlineage.integration.enabled', 'true'],
    ['snapshot.mode.custom.name', 'my.Snapshotter'],
  ])('refuses the pattern key %s, saying what to do instead', (key, value) => {
    const [error] = validate({ [key]: value });

    expect(error.key).toBe(key);
    expect(error.message).toMatch(/^not supported: .*; not supported yet/);
  });

  it.each([
    ['message.key.columns', 'public.t:id;public.(.*):tenant,id'],
    ['column.mask.with.12.chars', 'public.customers.email'],
    ['column.mask.hash.SHA-256.with.salt.CzQMA0cB5K', 'public.customers.email'],
    ['column.mask.hash.v2.SHA-256.with.salt.CzQMA0cB5K', 'public.customers.email'],
    ['column.mask.hash.hashing.strategy.version', 'V2'],
    ['column.truncate.to.20.chars', 'public.customers.name'],
    ['topic.transaction', 'tx'],
    ['message.prefix.include.list', 'audit.*, outbox'],
    ['message.prefix.exclude.list', 'debug'],
  ])('accepts the implemented key %s', (key, value) => {
    expect(validate({ [key]: value })).toEqual([]);
  });

  it('lets through the value that asks for what the connector does anyway, in any case', () => {
    expect(
      validate({
        'include.schema.comments': 'FALSE',
        'lsn.flush.mode': 'Connector',
        'snapshot.isolation.mode': 'REPEATABLE_READ',
      }),
    ).toEqual([]);
    expect(validate({ 'snapshot.isolation.mode': 'serializable' }).map((e) => e.key)).toEqual([
      'snapshot.isolation.mode',
    ]);
  });

  it.each([
    ['snapshot.mode', 'configuration_based'],
    ['snapshot.mode.configuration.based.snapshot.data', 'true'],
    ['snapshot.include.collection.list', 'public.orders'],
    ['snapshot.locking.mode', 'NONE'],
    ['snapshot.lock.timeout.ms', '5000'],
    ['snapshot.delay.ms', '100'],
    ['streaming.delay.ms', '100'],
  ])('accepts the implemented snapshot key %s', (key, value) => {
    expect(validate({ [key]: value })).toEqual([]);
  });

  it('accepts snapshot.select.statement.overrides with its statements, and refuses either alone', () => {
    const statement = 'SELECT * FROM public.orders WHERE id > 10';
    expect(
      validate({
        'snapshot.select.statement.overrides': 'public.orders',
        'snapshot.select.statement.overrides.public.orders': statement,
      }),
    ).toEqual([]);
    expect(
      validate({ 'snapshot.select.statement.overrides': 'public.orders' }).map((e) => e.message),
    ).toEqual([
      'lists public.orders but snapshot.select.statement.overrides.public.orders gives no SELECT statement for it',
    ]);
    expect(
      validate({ 'snapshot.select.statement.overrides.public.orders': statement }).map(
        (e) => e.message,
      ),
    ).toEqual(['is not used: add public.orders to snapshot.select.statement.overrides']);
  });

  it('refuses snapshot.mode=custom and snapshot.locking.mode=custom: no Java classes here', () => {
    for (const key of ['snapshot.mode', 'snapshot.locking.mode']) {
      const parsed = parseConfig(postgresCdcConfigDefs, { ...base, [key]: 'Custom' });
      expect(parsed.errors).toEqual([
        {
          key,
          value: 'Custom',
          message: expect.stringMatching(/^custom cannot run here: it names a Java class/),
        },
      ]);
    }
  });

  it('allows keys nobody defines, and the keys every connector has', () => {
    expect(
      validate({
        'my.own.setting': 'x',
        'tasks.max': '1',
        'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
        'value.converter.schemas.enable': 'false',
        'header.converter': 'org.apache.kafka.connect.storage.SimpleHeaderConverter',
        transforms: 'unwrap',
        'transforms.unwrap.type': 'io.debezium.transforms.ExtractNewRecordState',
        predicates: 'p',
        'predicates.p.type': 'org.apache.kafka.connect.transforms.predicates.TopicNameMatches',
        'errors.tolerance': 'all',
        'errors.deadletterqueue.topic.name': 'dlq',
        'topic.creation.default.replication.factor': '1',
        'config.action.reload': 'restart',
        'producer.override.compression.type': 'lz4',
      }),
    ).toEqual([]);
  });

  it('shows in /config/validate (and so refuses the create) through the runtime', () => {
    const messages = runtimeValidationMessages({
      ...base,
      'notification.sink.topic.name': 'notes',
      'my.own.setting': 'x',
    });

    expect(messages).toEqual([
      "not supported: notification.sink.topic.name; not supported yet: the connector sends no notifications; incremental snapshot progress is in the task's log",
    ]);
  });

  it('lets the implemented keys whose names carry parameters through the runtime validation', () => {
    const messages = runtimeValidationMessages({
      ...base,
      'column.mask.with.12.chars': 'public.customers.email',
      'column.truncate.to.20.chars': 'public.customers.name',
      'column.mask.hash.SHA-256.with.salt.CzQMA0cB5K': 'public.customers.phone',
      'column.mask.hash.v2.MD5.with.salt.x': 'public.customers.city',
      'column.mask.hash.hashing.strategy.version': 'v2',
      'snapshot.select.statement.overrides': 'public.orders',
      'snapshot.select.statement.overrides.public.orders': 'SELECT * FROM public.orders',
    });

    expect(messages).toEqual([]);
  });

  it('refuses to start with a stored config that holds one', async () => {
    await expect(
      new PostgresCdcSourceConnector().start({
        ...base,
        'notification.sink.topic.name': 'notes',
      }),
    ).rejects.toThrow(/^not supported: notification\.sink\.topic\.name; /);
  });
});

describe("Debezium's enumerations, case-insensitively", () => {
  it('accepts snapshot.mode=INITIAL and the other enumerations in any case, read in lower case', () => {
    const parsed = parseConfig(postgresCdcConfigDefs, {
      ...base,
      'snapshot.mode': 'INITIAL',
      'decimal.handling.mode': 'String',
      'time.precision.mode': 'CONNECT',
      'publication.autocreate.mode': 'Filtered',
      'database.sslmode': 'REQUIRE',
      'plugin.name': 'PGOUTPUT',
      'skipped.operations': 'T,D',
    });

    expect(parsed.errors).toEqual([]);
    expect(readSettings(parsed.values)).toMatchObject({
      snapshotMode: 'initial',
      decimalHandlingMode: 'string',
      timePrecisionMode: 'connect',
      publicationMode: 'filtered',
      connection: { sslmode: 'require' },
      skippedOperations: new Set(['t', 'd']),
    });
  });
});

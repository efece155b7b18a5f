import { describe, expect, it } from 'vitest';
import {
  type ConnectorConfig,
  loadManifests,
  parseConfig,
} from '../../../src/connect/api/index.ts';
import {
  configErrorMessages,
  validateConnectorConfig,
  validationContext,
} from '../../../src/connect/runtime/config-validation.ts';
import { PluginRegistry } from '../../../src/connect/runtime/plugins.ts';
import plugin from '../index.ts';
import { postgresCdcConfigDefs, readSettings } from '../src/connector-config.ts';
import { PostgresCdcSourceConnector } from '../src/postgres-cdc-connector.ts';
import { UNSUPPORTED_KEYS } from '../src/unsupported-keys.ts';

const base: ConnectorConfig = {
  name: 'inventory',
  'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
  'database.hostname': 'db.example',
  'database.user': 'u',
  'database.dbname': 'inventory',
  'topic.prefix': 'one',
};

/** The connector's validate() errors for `base` plus `extra`, as the runtime calls it. */
function validate(extra: ConnectorConfig) {
  const parsed = parseConfig(postgresCdcConfigDefs, { ...base, ...extra });
  expect(parsed.errors).toEqual([]);
  return new PostgresCdcSourceConnector().validate(parsed.values, {
    connectorName: 'inventory',
    otherConnectors: [],
  });
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
    ['column.mask.with.12.chars', 'public.customers.email'],
    ['column.mask.hash.SHA-256.with.salt.CzQMA0cB5K', 'public.customers.email'],
    ['column.mask.hash.v2.SHA-256.with.salt.CzQMA0cB5K', 'public.customers.email'],
    ['column.truncate.to.20.chars', 'public.customers.name'],
    ['snapshot.mode.configuration.based.snapshot.data', 'true'],
    ['snapshot.select.statement.overrides.public.orders', 'SELECT * FROM public.orders'],
  ])('refuses the pattern key %s, saying what to do instead', (key, value) => {
    const [error] = validate({ [key]: value });

    expect(error.key).toBe(key);
    expect(error.message).toMatch(/^not supported: .*; not supported yet/);
  });

  it('says what message.key.columns users get instead', () => {
    expect(validate({ 'message.key.columns': 'public.t:id' })[0].message).toBe(
      'not supported: message.key.columns; not supported yet; events are keyed by the primary key ' +
        '(or REPLICA IDENTITY USING INDEX), and tables without a key get null keys and a ' +
        'cleanup.policy=delete topic',
    );
  });

  it('lets through the value that asks for what the connector does anyway, in any case', () => {
    expect(
      validate({
        'include.schema.comments': 'FALSE',
        'lsn.flush.mode': 'Connector',
        'snapshot.locking.mode': 'shared',
      }),
    ).toEqual([]);
    expect(validate({ 'snapshot.locking.mode': 'none' }).map((e) => e.key)).toEqual([
      'snapshot.locking.mode',
    ]);
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
        'producer.override.linger.ms': '5',
      }),
    ).toEqual([]);
  });

  it('shows in /config/validate (and so refuses the create) through the runtime', () => {
    const plugins = new PluginRegistry();
    plugins.add(loadManifests({ default: plugin }, 'connectors/postgres-cdc'), 'builtin');

    const infos = validateConnectorConfig(
      plugins,
      { ...base, 'column.mask.with.12.chars': 'public.customers.email', 'my.own.setting': 'x' },
      validationContext(null, []),
    );

    expect(configErrorMessages(infos)).toEqual([
      'not supported: column.mask.with.12.chars; not supported yet; the values would be sent as ' +
        'they are. Leave the column out with column.exclude.list, or mask it with a transform',
    ]);
  });

  it('refuses to start with a stored config that holds one', async () => {
    await expect(
      new PostgresCdcSourceConnector().start({
        ...base,
        'column.mask.with.12.chars': 'public.t.c',
      }),
    ).rejects.toThrow(/^not supported: column\.mask\.with\.12\.chars; /);
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

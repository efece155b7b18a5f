/**
 * Connector config keys nobody defines: a near miss of a defined key, or another
 * connector's key, is refused (400 on create and update, an error on that key in
 * /config/validate); runtime keys and prefixes are never flagged; anything else is
 * passed through and logged once when the connector starts.
 */
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  configErrorMessages,
  unlistedConnectorKeys,
  validateConnectorConfig,
  validationContext,
} from '../../../../src/connect/runtime/config-validation.ts';
import { loadPlugins } from '../../../../src/connect/runtime/plugins.ts';
import { editDistance } from '../../../../src/connect/runtime/unknown-connector-keys.ts';
import { Worker } from '../../../../src/connect/runtime/worker.ts';
import { MemoryOffsetBackingStore } from '../../../../src/connect/storage/memory-offset-backing-store.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import {
  fileConnectorFolder,
  type RestFixture,
  restFixture,
  sinkConfig,
  sourceConfig,
  testPlugins,
} from './rest-fixture.ts';

const alone = validationContext(null, []);

describe('editDistance', () => {
  it.each([
    ['tabel.include.list', 'table.include.list', 1],
    ['batch.sise', 'batch.size', 1],
    ['topic', 'topics', 1],
    ['file', 'file', 0],
    ['abc', 'xyz', 3],
  ])('%s ~ %s is %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });
});

describe('unknown connector keys over REST', () => {
  let f: RestFixture;
  beforeEach(async () => {
    f = await restFixture();
  });
  afterEach(async () => {
    await f.close();
  });

  it('a near miss of a plugin key fails create with 400 naming the key and the guess', async () => {
    const res = await f.app.inject({
      method: 'POST',
      url: '/connectors',
      payload: { name: 'src', config: sourceConfig('src', { 'batch.sise': '10' }) },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain("unknown key 'batch.sise': did you mean 'batch.size'?");
    expect(await f.herder.connectors()).toEqual([]);
  });

  it('a near miss of a runtime key (task.max) fails an update with 400', async () => {
    await f.herder.putConnectorConfig('src', sourceConfig('src'), false);
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connectors/src/config',
      payload: sourceConfig('src', { 'task.max': '3' }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain("unknown key 'task.max': did you mean 'tasks.max'?");
  });

  it('/config/validate puts the error on that key', async () => {
    const res = await f.app.inject({
      method: 'PUT',
      url: '/connector-plugins/FileStreamSource/config/validate',
      payload: sourceConfig('src', { 'batch.sise': '10' }),
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as {
      error_count: number;
      configs: { definition: unknown; value: { name: string; errors: string[] } }[];
    };
    expect(body.error_count).toBe(1);
    expect(body.configs.find((c) => c.value.name === 'batch.sise')).toEqual({
      definition: null,
      value: {
        name: 'batch.sise',
        value: '10',
        recommended_values: [],
        errors: ["unknown key 'batch.sise': did you mean 'batch.size'?"],
        visible: true,
      },
    });
  });
});

describe('validateConnectorConfig and unknown keys', () => {
  it('typos of tasks.max and offsets.storage.topic are caught; a sink may carry offsets.storage.topic', async () => {
    const plugins = await testPlugins();
    const source = validateConnectorConfig(
      plugins,
      sourceConfig('src', { 'tasks.mx': '2', 'offsets.storage.topc': 'o' }),
      alone,
    );
    expect(configErrorMessages(source)).toEqual([
      "unknown key 'tasks.mx': did you mean 'tasks.max'?",
      "unknown key 'offsets.storage.topc': did you mean 'offsets.storage.topic'?",
    ]);
    const sink = sinkConfig('snk', { 'offsets.storage.topic': 'o' });
    expect(configErrorMessages(validateConnectorConfig(plugins, sink, alone))).toEqual([]);
  });

  it("another connector plugin's key is refused, naming that plugin", async () => {
    const plugins = await testPlugins();
    const infos = validateConnectorConfig(
      plugins,
      sinkConfig('snk', { 'batch.size': '10' }),
      alone,
    );
    expect(configErrorMessages(infos)).toEqual([
      "unknown key 'batch.size': it is a key of connect.file.FileStreamSourceConnector, not of connect.file.FileStreamSinkConnector",
    ]);
  });

  it('runtime keys and keys under runtime prefixes are never flagged', async () => {
    const plugins = await testPlugins();
    const config = sourceConfig('src', {
      'producer.override.acks': 'all',
      'producer.override.linger.ms': '0',
      'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
      'key.converter.schemas.enable': 'false',
      'key.converter.schemas.enabl': 'false',
      'value.converter.whatever': 'x',
      'header.converter.x': 'y',
      'errors.tolerance': 'all',
      'errors.log.enabl': 'true',
      'transforms.unused.foo': 'bar',
      'predicates.unused.foo': 'bar',
      'topic.creation.default.partitions': '1',
      'topic.creation.default.replication.factor': '1',
      'topic.creation.default.cleanup.policy': 'compact',
      'config.action.reload': 'none',
      'exactly.once.support': 'requested',
      'transaction.boundary': 'poll',
      'transaction.boundary.interval.ms': '100',
      'connector.plugin.version': '1',
    });
    const infos = validateConnectorConfig(plugins, config, alone);
    expect(configErrorMessages(infos)).toEqual([]);
  });

  it('a key a configured transformation or predicate does not define is refused; an unlisted alias stays unread', async () => {
    const plugins = await testPlugins();
    const infos = validateConnectorConfig(
      plugins,
      sinkConfig('snk', {
        transforms: 'unwrap,route',
        'transforms.unwrap.type': 'io.debezium.transforms.ExtractNewRecordState',
        'transforms.unwrap.add.fields': 'op',
        'transforms.unwrap.route.by.field': 'table',
        'transforms.unwrap.add.fieldz': 'lsn',
        'transforms.unwrap.version': '2.7.0',
        'transforms.route.type': 'org.apache.kafka.connect.transforms.RegexRouter',
        'transforms.route.regex': 'a',
        'transforms.route.replacement': 'b',
        'transforms.unused.whatever': 'x',
        predicates: 'tomb',
        'predicates.tomb.type': 'org.apache.kafka.connect.transforms.predicates.RecordIsTombstone',
        'predicates.tomb.pattern': 'x',
      }),
      alone,
    );
    expect(configErrorMessages(infos)).toEqual([
      "not supported: transforms.unwrap.route.by.field: io.debezium.transforms.ExtractNewRecordState here does not implement 'route.by.field' (its keys: type, predicate, negate, delete.tombstone.handling.mode, delete.handling.mode, drop.tombstones, add.fields, add.fields.prefix, add.headers, add.headers.prefix)",
      "unknown key 'transforms.unwrap.add.fieldz': did you mean 'transforms.unwrap.add.fields'?",
      "not supported: predicates.tomb.pattern: org.apache.kafka.connect.transforms.predicates.RecordIsTombstone here does not implement 'pattern' (its keys: type)",
    ]);
  });

  it("a source's offsets.storage.topic is refused by name in standalone mode, accepted in distributed mode", async () => {
    const plugins = await testPlugins();
    const config = sourceConfig('src', { 'offsets.storage.topic': 'my-offsets' });
    // The default worker is standalone's: Kafka ignores the key there, this worker refuses it.
    expect(configErrorMessages(validateConnectorConfig(plugins, config, alone))).toEqual([
      "not supported in standalone mode: a connector's own offsets topic; standalone mode keeps every connector's offsets in offset.storage.file.filename (remove this key, or run `connect worker`)",
    ]);
    const distributed = { exactlyOnceSource: false, connectorOffsetsTopics: true };
    expect(
      configErrorMessages(validateConnectorConfig(plugins, config, alone, distributed)),
    ).toEqual([]);
    const empty = sourceConfig('src', { 'offsets.storage.topic': '' });
    expect(
      configErrorMessages(validateConnectorConfig(plugins, empty, alone, distributed)),
    ).toEqual(['Invalid value  for configuration offsets.storage.topic: String must be non-empty']);
  });

  it('a key far from every defined key is accepted and listed for the start-up log', async () => {
    const plugins = await testPlugins();
    const config = sourceConfig('src', { 'my.custom.passthrough': 'x' });
    expect(validateConnectorConfig(plugins, config, alone).error_count).toBe(0);
    const manifest = plugins.findOfType('FileStreamSource', 'source', 'sink');
    if (manifest === undefined) throw new Error('FileStreamSource not loaded');
    expect(unlistedConnectorKeys(plugins, manifest, config)).toEqual(['my.custom.passthrough']);
  });

  it("the CDC connector's own refusal of an unsupported Debezium key is the only error on it", async () => {
    const plugins = await loadPlugins({
      pluginPath: [fileURLToPath(new URL('../../../../connectors/postgres-cdc', import.meta.url))],
      logger: getLogger('test.plugins'),
    });
    const base = {
      name: 'inventory',
      'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
      'database.hostname': 'db.example',
      'database.user': 'u',
      'database.dbname': 'inventory',
      'topic.prefix': 'one',
    };
    const typo = validateConnectorConfig(
      plugins,
      { ...base, 'tabel.include.list': 'public.orders' },
      alone,
    );
    expect(configErrorMessages(typo)).toEqual([
      "unknown key 'tabel.include.list': did you mean 'table.include.list'?",
    ]);
    const renamed = configErrorMessages(
      validateConnectorConfig(plugins, { ...base, 'table.whitelist': 'public.orders' }, alone),
    );
    expect(renamed).toHaveLength(1);
    expect(renamed[0]).toContain('not supported: table.whitelist');
  });
});

describe('the start-up log', () => {
  it('names each passed-through key once when the connector starts', async () => {
    const plugins = await loadPlugins({
      pluginPath: [fileConnectorFolder],
      logger: getLogger('test.plugins'),
    });
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino(
      { level: 'info' },
      { write: (s: string) => void lines.push(JSON.parse(s)) },
    );
    const worker = new Worker({
      workerId: 'test:1',
      config: {},
      plugins,
      offsetStore: new MemoryOffsetBackingStore(),
      status: { connectorState() {}, taskState() {} },
      // Never used: a connector's start makes no Kafka call.
      kafka: new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING }),
      logger,
    });
    const config = sourceConfig('src', { 'my.custom.passthrough': 'x' });
    expect(await worker.startConnector('src', config, 'RUNNING', () => {})).toBe(true);
    await worker.stopConnector('src');
    const mentions = lines.filter((l) => l.msg.includes("'my.custom.passthrough'"));
    expect(mentions).toHaveLength(1);
    expect(mentions[0].msg).toContain('connector src');
    expect(lines.filter((l) => l.msg.includes("'file'"))).toEqual([]);
  });
});

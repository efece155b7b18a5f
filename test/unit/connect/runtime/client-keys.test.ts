/**
 * Kafka's client keys under producer.* / consumer.* / admin.* and their connector
 * overrides: what the clients read is accepted, what they do not implement is refused
 * by name (at /config/validate, at worker start and at task start), with Kafka's
 * override-policy messages. Before this, every such key was accepted and ignored.
 */
import { describe, expect, it } from 'vitest';
import { workerCrossChecks } from '../../../../src/cli/worker-command.ts';
import { loadConfig } from '../../../../src/config/load.ts';
import { distributedWorkerDefs } from '../../../../src/config/worker-config.ts';
import {
  clientKeyProblems,
  kafkaClientKeys,
  readClientKeys,
} from '../../../../src/connect/runtime/client-keys.ts';
import {
  configErrorMessages,
  validateConnectorConfig,
  validationContext,
} from '../../../../src/connect/runtime/config-validation.ts';
import { clientConfig, producerSettings } from '../../../../src/connect/runtime/kafka-clients.ts';
import { CompressionCodec } from '../../../../src/protocol/compression.ts';
import { encodeBatch } from '../../../../src/protocol/record-batch.ts';
import { sinkConfig, sourceConfig, testPlugins } from '../rest/rest-fixture.ts';

const alone = validationContext(null, []);

describe('client keys', () => {
  it("covers every key Kafka 4.0's producer, consumer and admin configs define", () => {
    // A sample of each group the catalogue must hold (the full lists are Kafka's ConfigDefs).
    for (const key of ['linger.ms', 'batch.size', 'partitioner.class', 'transactional.id']) {
      expect(kafkaClientKeys('producer')).toContain(key);
    }
    for (const key of [
      'group.instance.id',
      'client.rack',
      'enable.auto.commit',
      'group.protocol',
    ]) {
      expect(kafkaClientKeys('consumer')).toContain(key);
    }
    for (const key of ['ssl.truststore.location', 'sasl.jaas.config', 'security.protocol']) {
      expect(kafkaClientKeys('admin')).toContain(key);
    }
    expect(readClientKeys('admin')).toEqual([]);
    expect(readClientKeys('producer')).toContain('compression.zstd.level');
  });

  it('refuses what the clients do not implement, by name and with what to do instead', () => {
    const problems = clientKeyProblems('producer', 'producer.override.', {
      'producer.override.acks': 'all',
      'producer.override.linger.ms': '100',
      'producer.override.batch.size': '65536',
      'producer.override.fancy.feature': '1',
      'producer.override.lnger.ms': '1',
      'producer.override.sasl.jaas.config': 'secret-text',
      'producer.override.partitioner.ignore.keys': 'false',
      'producer.override.retries': '2147483647',
    });
    expect(problems.map((p) => p.key)).toEqual([
      'producer.override.linger.ms',
      'producer.override.batch.size',
      'producer.override.fancy.feature',
      'producer.override.lnger.ms',
      'producer.override.sasl.jaas.config',
    ]);
    expect(problems[0].message).toMatch(/^not supported: linger\.ms=100: a source task's records/);
    expect(problems[1].message).toMatch(/^not supported: batch\.size: .*set max\.request\.size/);
    expect(problems[2].message).toBe(
      'not supported: fancy.feature is not a producer config Kafka defines, and nothing here reads it',
    );
    expect(problems[3].message).toContain("did you mean 'linger.ms'?");
    expect(problems[4].message).toContain('PLAINTEXT only');
    expect(problems[4].message).not.toContain('secret-text');
  });

  it("applies Kafka's override policies", () => {
    const config = { 'consumer.override.max.poll.records': '10' };
    expect(clientKeyProblems('consumer', 'consumer.override.', config, 'All')).toEqual([]);
    expect(clientKeyProblems('consumer', 'consumer.override.', config, 'None')).toEqual([
      {
        key: 'consumer.override.max.poll.records',
        message:
          "The 'None' policy does not allow 'max.poll.records' to be overridden in the connector configuration.",
      },
    ]);
    expect(clientKeyProblems('consumer', 'consumer.override.', config, 'Principal')).toHaveLength(
      1,
    );
    expect(() =>
      clientConfig('consumer', { 'connector.client.config.override.policy': 'None' }, config),
    ).toThrow(/consumer\.override\.max\.poll\.records: The 'None' policy/);
  });

  it('/config/validate puts each refusal on its key, and checks the values the clients read', async () => {
    const plugins = await testPlugins();
    const source = validateConnectorConfig(
      plugins,
      sourceConfig('src', {
        'producer.override.compression.type': 'zstd',
        'producer.override.compression.zstd.level': '30',
        'producer.override.interceptor.classes': 'com.example.Audit',
        'consumer.override.max.poll.records': '10',
        'admin.override.client.id': 'a',
      }),
      alone,
    );
    expect(configErrorMessages(source)).toEqual([
      'not supported: a source connector has no consumer to override',
      'not supported: interceptor.classes: it names Java classes, and this runtime does not load Java classes',
      "not supported: client.id: the worker's admin client (topic creation, dead letter queues) is configured by the worker's own keys (bootstrap.servers, client.id, request.timeout.ms, retry.backoff.ms); admin.* keys are not read",
    ]);
    const levelOnly = validateConnectorConfig(
      plugins,
      sourceConfig('src', { 'producer.override.compression.zstd.level': '30' }),
      alone,
    );
    expect(configErrorMessages(levelOnly)).toEqual([
      'Invalid value 30 for configuration compression.zstd.level: Value must be between -131072 and 22',
    ]);
    const sink = validateConnectorConfig(
      plugins,
      sinkConfig('snk', {
        'consumer.override.enable.auto.commit': 'true',
        'consumer.override.auto.offset.reset': 'smallest',
        'producer.override.acks': 'all',
      }),
      alone,
    );
    expect(configErrorMessages(sink)).toEqual([
      "not supported: a sink connector's only producer is its dead letter queue's, which takes no producer.override.* keys",
      expect.stringMatching(/^not supported: enable\.auto\.commit=true: sink tasks commit/),
    ]);
    const policyNone = validateConnectorConfig(
      plugins,
      sinkConfig('snk', { 'consumer.override.max.poll.records': '10' }),
      alone,
      { exactlyOnceSource: false, clientOverridePolicy: 'None' },
    );
    expect(configErrorMessages(policyNone)).toEqual([
      "The 'None' policy does not allow 'max.poll.records' to be overridden in the connector configuration.",
    ]);
  });

  it('a worker refuses its own client keys that would do nothing, without showing secrets', () => {
    const loaded = loadConfig({
      defs: distributedWorkerDefs,
      envPrefix: 'CONNECT_',
      env: {},
      options: [
        'group.id=g',
        'producer.linger.ms=5',
        'consumer.max.poll.records=10',
        'sasl.jaas.config=user="u" password="p"',
        'listeners.https.ssl.keystore.location=/k',
      ],
      passthroughPrefixes: [
        'producer.',
        'consumer.',
        'admin.',
        'ssl.',
        'sasl.',
        'listeners.https.',
      ],
    });
    const errors = workerCrossChecks(loaded.values);
    expect(errors.map((e) => e.key)).toEqual([
      'producer.linger.ms',
      'sasl.jaas.config',
      'listeners.https.ssl.keystore.location',
    ]);
    expect(errors.every((e) => e.value === undefined)).toBe(true);
    expect(JSON.stringify(errors)).not.toContain('password="p"');
    const secure = loadConfig({
      defs: distributedWorkerDefs,
      envPrefix: 'CONNECT_',
      env: {},
      options: ['group.id=g', 'security.protocol=SASL_SSL'],
    });
    expect(secure.errors.map((e) => (e.kind === 'bad-value' ? e.error.message : e.kind))).toEqual([
      "not supported: security.protocol=SASL_SSL; the worker's Kafka clients connect in PLAINTEXT only (TLS and SASL are not implemented)",
    ]);
  });

  it('the producer takes its KIP-390 level and client.id', () => {
    const s = producerSettings({
      'compression.type': 'gzip',
      'compression.gzip.level': '1',
      'compression.zstd.level': '5',
      'client.id': 'mine',
    });
    expect(s).toMatchObject({
      compression: CompressionCodec.gzip,
      compressionLevel: 1,
      clientId: 'mine',
    });
    // The level reaches the batch encoder the producer uses.
    const records = Array.from({ length: 500 }, (_, i) => ({
      key: null,
      timestamp: null,
      value: Buffer.from(`{"id":${i},"name":"user ${i % 31}","note":"${'x'.repeat(i % 40)}"}`),
    }));
    const at = (compressionLevel: number) =>
      encodeBatch({ records, codec: CompressionCodec.gzip, compressionLevel }).length;
    expect(at(1)).toBeGreaterThan(at(9));
    expect(() => producerSettings({ 'compression.gzip.level': '0' })).toThrow(
      'Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1',
    );
  });
});

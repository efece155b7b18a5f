/**
 * The signal and incremental snapshot keys: what is read (the source, kafka and file
 * channels with Debezium's defaults), and what is refused by name (the jmx channel,
 * consumer properties the signal topic reader does not implement), through the
 * runtime's validation as /config/validate runs it.
 */
import { describe, expect, it } from 'vitest';
import { type ConnectorConfig, parseConfig } from '../../../src/connect/api/index.ts';
import { postgresCdcConfigDefs, readSettings } from '../src/connector-config.ts';
import { baseConfig as base, runtimeValidationMessages } from './config-support.ts';

function messages(extra: ConnectorConfig): string[] {
  return runtimeValidationMessages({ ...base, ...extra });
}

describe('signal and incremental snapshot keys', () => {
  it('reads signal.data.collection as a table and incremental.snapshot.chunk.size', () => {
    const s = readSettings(
      parseConfig(postgresCdcConfigDefs, {
        ...base,
        'signal.data.collection': 'public.debezium_signal',
        'incremental.snapshot.chunk.size': '5000',
      }).values,
    );
    expect([s.signalTable, s.incrementalChunkSize]).toEqual([
      { schema: 'public', table: 'debezium_signal' },
      5000,
    ]);
  });

  it('has no signal table and chunks of 1024 rows by default, as Debezium', () => {
    const s = readSettings(parseConfig(postgresCdcConfigDefs, base).values);
    expect([s.signalTable, s.incrementalChunkSize]).toEqual([null, 1024]);
  });

  it('accepts the Debezium settings that name what it does anyway', () => {
    expect(
      messages({
        'signal.data.collection': 'public.debezium_signal',
        'signal.enabled.channels': 'source',
        'read.only': 'false',
        'incremental.snapshot.watermarking.strategy': 'INSERT_INSERT',
      }),
    ).toEqual([]);
  });

  it.each([
    [
      { 'signal.data.collection': 'debezium_signal' },
      /signal\.data\.collection.*must name a table as <schema>\.<table>/,
    ],
    [
      { 'signal.enabled.channels': 'source,JMX' },
      /signal\.enabled\.channels.*'JMX' is not supported: the jmx channel .* needs a Java VM/,
    ],
    [
      { 'signal.enabled.channels': 'source,in-process' },
      /signal\.enabled\.channels.*'in-process' is not supported/,
    ],
    [
      { 'signal.enabled.channels': 'source,carrier-pigeon' },
      /signal\.enabled\.channels.*'carrier-pigeon' is not a signal channel \(channels: source, kafka, file\)/,
    ],
    [
      { 'signal.enabled.channels': 'kafka' },
      /^signal\.enabled\.channels names kafka, which needs signal\.data\.collection: /,
    ],
    [
      { 'signal.data.collection': 'public.s', 'signal.consumer.session.timeout.ms': '10000' },
      /^not supported: signal\.consumer\.session\.timeout\.ms; the signal topic reader implements only the consumer properties bootstrap\.servers, /,
    ],
    [
      { 'signal.data.collection': 'public.s', 'signal.consumer.security.protocol': 'SASL_SSL' },
      /^not supported: signal\.consumer\.security\.protocol=SASL_SSL; the signal topic reader supports plaintext/,
    ],
    [
      { 'signal.data.collection': 'public.s', 'signal.consumer.auto.offset.reset': 'middle' },
      /^not supported: signal\.consumer\.auto\.offset\.reset=middle; /,
    ],
    [{ 'signal.poll.interval.ms': '0' }, /signal\.poll\.interval\.ms/],
    [{ 'signal.kafka.poll.timeout.ms': '-1' }, /signal\.kafka\.poll\.timeout\.ms/],
    [{ 'read.only': 'yes' }, /read\.only/],
    [
      { 'incremental.snapshot.watermarking.strategy': 'insert_update' },
      /incremental\.snapshot\.watermarking\.strategy.*insert_insert, insert_delete/,
    ],
    [{ 'incremental.snapshot.chunk.size': '0' }, /incremental\.snapshot\.chunk\.size/],
  ])('refuses %o by name', (extra, message) => {
    const errors = messages(extra as ConnectorConfig);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
  });

  it("has Debezium's channel defaults: source only, <topic.prefix>-signal, kafka-signal, file-signals.txt", () => {
    const s = readSettings(parseConfig(postgresCdcConfigDefs, base).values).signalChannels;
    expect(s).toEqual({
      enabled: new Set(['source']),
      pollIntervalMs: 5000,
      kafka: {
        topic: 'one-signal',
        groupId: 'kafka-signal',
        bootstrapServers: null,
        pollTimeoutMs: 100,
        clientId: null,
        autoOffsetReset: 'earliest',
        maxPartitionFetchBytes: null,
        requestTimeoutMs: null,
      },
      file: 'file-signals.txt',
    });
  });

  it('reads the kafka and file channels, channel names in any case, signal.consumer.* over signal.kafka.*', () => {
    const config = {
      ...base,
      'signal.data.collection': 'public.debezium_signal',
      'signal.enabled.channels': 'Source, KAFKA,file',
      'signal.poll.interval.ms': '250',
      'signal.kafka.topic': 'signals',
      'signal.kafka.groupId': 'g1',
      'signal.kafka.bootstrap.servers': 'k1:9092',
      'signal.kafka.poll.timeout.ms': '20',
      'signal.consumer.group.id': 'g2',
      'signal.consumer.client.id': 'me',
      'signal.consumer.auto.offset.reset': 'latest',
      'signal.consumer.max.partition.fetch.bytes': '65536',
      'signal.consumer.key.deserializer':
        'org.apache.kafka.common.serialization.StringDeserializer',
      'signal.consumer.security.protocol': 'PLAINTEXT',
      'signal.file': '/var/signals.txt',
    };
    expect(messages(config)).toEqual([]);
    const s = readSettings(parseConfig(postgresCdcConfigDefs, config).values).signalChannels;
    expect(s).toEqual({
      enabled: new Set(['source', 'kafka', 'file']),
      pollIntervalMs: 250,
      kafka: {
        topic: 'signals',
        groupId: 'g2',
        bootstrapServers: 'k1:9092',
        pollTimeoutMs: 20,
        clientId: 'me',
        autoOffsetReset: 'latest',
        maxPartitionFetchBytes: 65536,
        requestTimeoutMs: null,
      },
      file: '/var/signals.txt',
    });
  });

  it('refuses to read settings (so the task does not start) with a consumer property it would ignore', () => {
    expect(() =>
      readSettings(
        parseConfig(postgresCdcConfigDefs, {
          ...base,
          'signal.data.collection': 'public.s',
          'signal.enabled.channels': 'kafka',
          'signal.consumer.fetch.min.bytes': '10',
        }).values,
      ),
    ).toThrow(/not supported: signal\.consumer\.fetch\.min\.bytes/);
  });
});

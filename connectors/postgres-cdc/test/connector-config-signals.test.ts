/**
 * The signal and incremental snapshot keys: what is read, and what is refused by name
 * (channels other than source, read-only incremental snapshots, blocking snapshots'
 * neighbours), through the runtime's validation as /config/validate runs it.
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
      { 'signal.enabled.channels': 'source,kafka' },
      /signal\.enabled\.channels.*contains kafka: only the source channel/,
    ],
    [{ 'signal.kafka.topic': 'signals' }, /^not supported: signal\.kafka\.topic; /],
    [{ 'signal.file': '/tmp/signals.txt' }, /^not supported: signal\.file; /],
    [{ 'read.only': 'true' }, /^not supported: read\.only; .*INSERT on it/],
    [
      { 'incremental.snapshot.watermarking.strategy': 'insert_delete' },
      /^not supported: incremental\.snapshot\.watermarking\.strategy; /,
    ],
    [{ 'incremental.snapshot.chunk.size': '0' }, /incremental\.snapshot\.chunk\.size/],
  ])('refuses %o by name', (extra, message) => {
    const errors = messages(extra as ConnectorConfig);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
  });
});

import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/connect/api/index.ts';
import {
  postgresCdcConfigDefs,
  readSettings,
  validateCombinations,
} from '../src/connector-config.ts';

const minimal = {
  'database.hostname': 'db',
  'database.user': 'u',
  'database.dbname': 'inventory',
  'topic.prefix': 'dbserver1',
};

describe('Postgres CDC connector configuration (Debezium keys)', () => {
  it('fills in Debezium defaults for a minimal Debezium config', () => {
    const parsed = parseConfig(postgresCdcConfigDefs, {
      ...minimal,
      'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    });
    expect(parsed.errors).toEqual([]);
    const s = readSettings(parsed.values);
    expect(s).toMatchObject({
      connection: { host: 'db', port: 5432, user: 'u', database: 'inventory', sslmode: 'prefer' },
      slotName: 'debezium',
      publicationName: 'dbz_publication',
      publicationMode: 'all_tables',
      snapshotMode: 'initial',
      snapshotFetchSize: 10240,
      decimalHandlingMode: 'precise',
      timePrecisionMode: 'adaptive',
      tombstonesOnDelete: true,
      maxBatchSize: 512,
      maxQueueSize: 2048,
    });
    expect([...s.skippedOperations]).toEqual(['t']);
    expect(validateCombinations(parsed.values)).toEqual([]);
  });

  it("sizes the queue at four batches unless told, so Debezium's max.batch.size gets its queue", () => {
    const settings = (config: Record<string, string>) => {
      const parsed = parseConfig(postgresCdcConfigDefs, { ...minimal, ...config });
      expect(validateCombinations(parsed.values)).toEqual([]);
      return readSettings(parsed.values);
    };
    expect(settings({ 'max.batch.size': '2048' })).toMatchObject({
      maxBatchSize: 2048,
      maxQueueSize: 8192,
    });
    expect(settings({ 'max.batch.size': '2048', 'max.queue.size': '3000' })).toMatchObject({
      maxQueueSize: 3000,
    });
  });

  it("retries a held slot and lost connections with Debezium's defaults, and keeps slot and publication on delete", () => {
    const parsed = parseConfig(postgresCdcConfigDefs, minimal);
    expect(readSettings(parsed.values)).toMatchObject({
      slotMaxRetries: 6,
      slotRetryDelayMs: 10_000,
      errorsMaxRetries: -1,
      slotDropOnDelete: false,
      topicCreation: {},
    });
    const bad = parseConfig(postgresCdcConfigDefs, {
      ...minimal,
      'slot.max.retries': '-1',
      'errors.max.retries': '-2',
    });
    expect(bad.errors.map((e) => e.key)).toEqual(['slot.max.retries', 'errors.max.retries']);
  });

  it('keeps the topic.creation keys the user wrote, for the check of tables without a key', () => {
    const parsed = parseConfig(postgresCdcConfigDefs, {
      ...minimal,
      'topic.creation.default.cleanup.policy': 'compact',
      'topic.creation.default.partitions': '1',
    });
    expect(readSettings(parsed.values).topicCreation).toEqual({
      'topic.creation.default.cleanup.policy': 'compact',
      'topic.creation.default.partitions': '1',
    });
  });

  it('names each missing required key and each bad value', () => {
    const parsed = parseConfig(postgresCdcConfigDefs, {
      'database.hostname': 'db',
      'snapshot.mode': 'sometimes',
      'slot.name': 'Bad-Slot',
      'plugin.name': 'decoderbufs',
      'skipped.operations': 'c,x',
    });
    expect(parsed.errors.map((e) => e.key).sort()).toEqual(
      [
        'database.dbname',
        'database.user',
        'plugin.name',
        'skipped.operations',
        'slot.name',
        'snapshot.mode',
        'topic.prefix',
      ].sort(),
    );
    expect(parsed.errors.find((e) => e.key === 'snapshot.mode')?.message).toMatch(
      /initial, initial_only, no_data, never, always, when_needed, configuration_based/,
    );
  });

  it('refuses include and exclude lists together, bad regexes, a queue no larger than a batch, and a heartbeat query without heartbeats', () => {
    const parsed = parseConfig(postgresCdcConfigDefs, {
      ...minimal,
      'table.include.list': 'public.a',
      'table.exclude.list': 'public.b',
      'column.exclude.list': 'public.a.(',
      'max.batch.size': '100',
      'max.queue.size': '100',
      'heartbeat.action.query': 'UPDATE hb SET ts = now()',
      'skipped.operations': 'none,t',
    });
    expect(parsed.errors).toEqual([]);
    expect(validateCombinations(parsed.values).map((e) => e.key)).toEqual([
      'table.exclude.list',
      'column.exclude.list',
      'max.queue.size',
      'heartbeat.action.query',
      'skipped.operations',
    ]);
  });
});

describe('snapshot settings', () => {
  it("reads snapshot.mode=never as no_data, Debezium's old name for it, and Debezium's snapshot defaults", () => {
    const parsed = parseConfig(postgresCdcConfigDefs, { ...minimal, 'snapshot.mode': 'NEVER' });
    expect(parsed.errors).toEqual([]);
    const s = readSettings(parsed.values);
    expect(s.snapshotMode).toBe('no_data');
    expect(s.snapshot).toEqual({
      include: [],
      selectOverrides: new Map(),
      locking: 'none',
      lockTimeoutMs: 10000,
      delayMs: 0,
      maxThreads: 1,
    });
    expect(s.streamingDelayMs).toBe(0);
  });

  it('reads snapshot.max.threads, and refuses fewer than one connection', () => {
    const three = parseConfig(postgresCdcConfigDefs, { ...minimal, 'snapshot.max.threads': '3' });
    expect(three.errors).toEqual([]);
    expect(readSettings(three.values).snapshot.maxThreads).toBe(3);
    const none = parseConfig(postgresCdcConfigDefs, { ...minimal, 'snapshot.max.threads': '0' });
    expect(none.errors.map((e) => e.key)).toEqual(['snapshot.max.threads']);
  });
});

describe('transaction metadata settings', () => {
  it("names the transaction topic <topic.prefix>.transaction by default, as Debezium's topic.transaction does, and takes another suffix", () => {
    const defaults = readSettings(parseConfig(postgresCdcConfigDefs, minimal).values);
    expect(defaults).toMatchObject({
      provideTransactionMetadata: false,
      topicTransaction: 'transaction',
    });
    const parsed = parseConfig(postgresCdcConfigDefs, {
      ...minimal,
      'provide.transaction.metadata': 'true',
      'topic.transaction': 'tx',
    });
    expect(parsed.errors).toEqual([]);
    expect(readSettings(parsed.values)).toMatchObject({
      provideTransactionMetadata: true,
      topicTransaction: 'tx',
    });
  });

  it('refuses a topic.transaction that cannot be part of a topic name', () => {
    const parsed = parseConfig(postgresCdcConfigDefs, {
      ...minimal,
      'topic.transaction': 'tx/meta',
    });
    expect(parsed.errors.map((e) => e.key)).toEqual(['topic.transaction']);
  });
});

/**
 * Records shaped like the sink's real inputs: Debezium change events for an `orders`
 * table (with schemas, as JsonConverter gives them) flattened by
 * ExtractNewRecordState, their envelopes, and schemaless JSON; and the runner's side
 * of a sink task's context.
 */
import {
  ManualClock,
  noopPluginMetrics,
  type Schema,
  Schemas,
  type SinkRecord,
  type SinkTaskContext,
  type TopicPartition,
  type TopicPartitionOffset,
} from '../../../src/connect/api/index.ts';
import type { ParquetSinkConfig } from '../config.ts';
import { DEFAULT_SEMANTIC_TYPES } from '../debezium-types.ts';

export const T0 = Date.UTC(2026, 10, 28, 22, 30); // 2026-11-28T22:30:00Z

export const orderSchema: Schema = Schemas.struct(
  [
    ['id', Schemas.int64()],
    ['customer', Schemas.string()],
    ['status', Schemas.string({ optional: true })],
    [
      'amount',
      {
        ...Schemas.decimal(2),
        parameters: { scale: '2', 'connect.decimal.precision': '10' },
      },
    ],
    ['created_on', { ...Schemas.int32(), name: 'io.debezium.time.Date', version: 1 }],
    ['updated_at', { ...Schemas.int64(), name: 'io.debezium.time.MicroTimestamp', version: 1 }],
    ['shipped_at', Schemas.timestamp({ optional: true })],
    ['__op', Schemas.string()],
    ['__deleted', Schemas.string()],
  ],
  { name: 'shop.public.orders.Value' },
);

/** Unscaled two's-complement bytes of a decimal with scale 2, e.g. 12.34 -> 1234. */
export function cents(n: number): Uint8Array {
  let v = BigInt(n);
  const bytes: number[] = [];
  do {
    bytes.unshift(Number(v & 0xffn));
    v >>= 8n;
  } while (
    !(v === 0n && (bytes[0] as number) < 0x80) &&
    !(v === -1n && (bytes[0] as number) >= 0x80)
  );
  return new Uint8Array(bytes);
}

export function orderValue(i: number): Record<string, unknown> {
  return {
    id: 1000 + i,
    customer: `customer-${i % 7}`,
    status: i % 5 === 0 ? null : ['NEW', 'PAID', 'SHIPPED'][i % 3],
    amount: cents(i * 101 - 500),
    created_on: 20_000 + (i % 3),
    updated_at: (T0 + i * 60_000) * 1000,
    shipped_at: i % 2 === 0 ? T0 + i * 60_000 : null,
    __op: i % 10 === 9 ? 'd' : 'c',
    __deleted: i % 10 === 9 ? 'true' : 'false',
  };
}

export function sinkRecord(
  topic: string,
  partition: number,
  offset: number,
  value: unknown,
  extra: Partial<SinkRecord> = {},
): SinkRecord {
  return {
    topic,
    kafkaPartition: partition,
    kafkaOffset: offset,
    timestampType: 'CreateTime',
    timestamp: T0 + offset * 60_000,
    key: { id: offset },
    keySchema: null,
    valueSchema: null,
    value,
    ...extra,
  };
}

export function orderRecords(
  topic: string,
  partition: number,
  from: number,
  count: number,
): SinkRecord[] {
  return Array.from({ length: count }, (_, k) =>
    sinkRecord(topic, partition, from + k, orderValue(from + k), { valueSchema: orderSchema }),
  );
}

/** What a config without partitioner keys reads to: the DefaultPartitioner. */
export const defaultPartitioner: ParquetSinkConfig['partitioner'] = {
  className: 'Default',
  fieldNames: [],
  pathFormat: '',
  durationMs: -1,
  locale: 'en',
  timezone: 'UTC',
  timestampExtractor: 'Record',
  timestampField: 'timestamp',
};

export function sinkConfig(
  store: ParquetSinkConfig['store'],
  over: Partial<ParquetSinkConfig> = {},
): ParquetSinkConfig {
  return {
    store,
    topicsDir: 'topics',
    fileDelim: '+',
    dirDelim: '/',
    retryBackoffMs: 5000,
    reportNullsToDlq: true,
    rotateOnPartitionChange: true,
    flushSize: 100,
    rotateIntervalMs: -1,
    rotateScheduleIntervalMs: -1,
    codec: 'snappy',
    nullBehavior: 'fail',
    format: { kind: 'parquet' },
    types: DEFAULT_SEMANTIC_TYPES,
    compatibility: 'NONE',
    padWidth: 10,
    storeKeys: false,
    storeHeaders: false,
    memoryMaxBytes: 256 * 1024 * 1024,
    ...over,
    partitioner: { ...defaultPartitioner, ...over.partitioner },
  };
}

/**
 * The runner's side of a sink task's context at T0, recording the offsets the task
 * asks to seek to; `over` replaces single callbacks (a test that watches timeouts).
 */
export function taskContext(
  assignment: TopicPartition[],
  over: Partial<SinkTaskContext> = {},
): SinkTaskContext & { seeks: TopicPartitionOffset[] } {
  const seeks: TopicPartitionOffset[] = [];
  return {
    seeks,
    connectorName: 'lake',
    taskId: 0,
    clock: new ManualClock(T0),
    assignment: () => assignment,
    pause: () => undefined,
    resume: () => undefined,
    requestCommit: () => undefined,
    offset: (o) => seeks.push(...o),
    timeout: () => undefined,
    reportTrouble: () => undefined,
    pluginMetrics: () => noopPluginMetrics,
    ...over,
  };
}

/**
 * Heartbeat records, as Debezium sends them: topic
 * `<topic.heartbeat.prefix><topic.delimiter><topic.prefix>` (topic-naming.ts; by default
 * `__debezium-heartbeat.<prefix>`),
 * key struct io.debezium.connector.common.ServerNameKey { serverName }, value struct
 * io.debezium.connector.common.Heartbeat { ts_ms }. Their offset is the task's current
 * position (the last streamed record's offset, its `lsn` raised to the slot's
 * confirmed LSN when that is further), so storing it never skips an owed change:
 * a restart from it skips exactly what a restart from that last record would.
 */
import {
  type Schema,
  Schemas,
  type SourceOffset,
  type SourcePartition,
  type SourceRecord,
} from '../../../src/connect/api/index.ts';
import type { Lsn } from './lsn.ts';

export const HEARTBEAT_KEY_SCHEMA: Schema = Schemas.struct([['serverName', Schemas.string()]], {
  name: 'io.debezium.connector.common.ServerNameKey',
});

export const HEARTBEAT_VALUE_SCHEMA: Schema = Schemas.struct([['ts_ms', Schemas.int64()]], {
  name: 'io.debezium.connector.common.Heartbeat',
});

export function heartbeatRecord(
  topic: string,
  topicPrefix: string,
  sourcePartition: SourcePartition,
  lastOffset: SourceOffset | null,
  confirmedLsn: Lsn,
  nowMs: number,
): SourceRecord {
  const lastLsn = typeof lastOffset?.lsn === 'number' ? lastOffset.lsn : 0;
  const base: SourceOffset = lastOffset ?? {};
  return {
    topic,
    keySchema: HEARTBEAT_KEY_SCHEMA,
    key: { serverName: topicPrefix },
    valueSchema: HEARTBEAT_VALUE_SCHEMA,
    value: { ts_ms: nowMs },
    timestamp: nowMs,
    sourcePartition,
    // A heartbeat ends any snapshot marking: it is only sent while streaming.
    sourceOffset: {
      ...base,
      lsn: Math.max(lastLsn, confirmedLsn),
      snapshot: null,
      last_snapshot_record: null,
    },
  };
}

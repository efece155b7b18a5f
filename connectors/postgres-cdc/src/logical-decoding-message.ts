/**
 * Debezium's logical decoding message events: what `pg_logical_emit_message(transactional,
 * prefix, content)` writes to the WAL, as Debezium's Postgres connector sends it
 * (LogicalDecodingMessageMonitor). pgoutput sends these messages only when replication
 * is started with `messages 'true'`, which Postgres 14 and later understand.
 *
 *   topic  `<topic.prefix>.message`
 *   key    io.debezium.connector.postgresql.MessageKey { prefix }
 *   value  io.debezium.connector.postgresql.MessageValue
 *          { op "m", ts_ms (processing time), source (the Postgres source block, schema
 *            and table ""), transaction (event.block or null),
 *            message io.debezium.connector.postgresql.Message { prefix, content } }
 *   content  per binary.handling.mode (binary-values.ts): bytes, or a base64,
 *            base64-url-safe or hex string
 *
 * Transactional messages belong to their transaction (its txId and commit time in
 * `source`, counted by transaction metadata as data collection LOGICAL_DECODING_MESSAGE,
 * as Debezium counts them); non-transactional ones have neither: txId null, ts_ms the
 * time they were processed, no transaction block. message.prefix.include.list and
 * message.prefix.exclude.list (never both) choose the prefixes sent: regular
 * expressions matched against the whole prefix, case-insensitively, as Debezium's
 * LogicalDecodingMessageFilter does. There is nothing to snapshot: messages exist in
 * the WAL only.
 */
import {
  type Schema,
  Schemas,
  type SourceOffset,
  type SourcePartition,
  type SourceRecord,
} from '../../../src/connect/api/index.ts';
import { type BinaryHandlingMode, binaryEncoding } from './binary-values.ts';
import { SOURCE_SCHEMA, TRANSACTION_BLOCK_SCHEMA } from './envelope-schema.ts';
import { CONNECTOR_VERSION } from './event-builder.ts';
import type { Lsn } from './lsn.ts';
import type { TransactionBlock } from './transaction-metadata.ts';

/** server_version_num from which pgoutput accepts `messages 'true'`. */
export const MESSAGES_SINCE_VERSION = 140000;

/**
 * Why message.prefix.include.list / exclude.list cannot work on this server, or null:
 * pgoutput before Postgres 14 sends no messages, so a filter for them would select
 * from nothing without a word. (Without the keys, messages are simply not captured
 * there, as with Debezium.)
 */
export function messagePrefixProblem(
  serverVersionNum: number,
  lists: { include: readonly string[]; exclude: readonly string[] },
): string | null {
  if (serverVersionNum >= MESSAGES_SINCE_VERSION) return null;
  const keys = [
    lists.include.length > 0 ? 'message.prefix.include.list' : null,
    lists.exclude.length > 0 ? 'message.prefix.exclude.list' : null,
  ].filter((k) => k !== null);
  if (keys.length === 0) return null;
  return (
    `${keys.join(' and ')} cannot apply: this Postgres (server_version_num ${serverVersionNum}) ` +
    'is older than 14, whose pgoutput sends no logical decoding messages; remove the key or upgrade Postgres'
  );
}

/** Debezium's data collection of messages in transaction metadata (LogicalDecodingMessageId). */
export const MESSAGE_DATA_COLLECTION = 'LOGICAL_DECODING_MESSAGE';

/** The offsets' messageType of a message record (Debezium's Operation.MESSAGE). */
export const MESSAGE_TYPE = 'MESSAGE';

export const MESSAGE_KEY_SCHEMA: Schema = Schemas.struct(
  [['prefix', Schemas.string({ optional: true })]],
  { name: 'io.debezium.connector.postgresql.MessageKey', version: 1 },
);

export interface MessageSchemas {
  key: Schema;
  value: Schema;
  encode(content: Buffer): unknown;
}

const SCHEMAS = new Map<BinaryHandlingMode, MessageSchemas>();

/** The schemas for one binary.handling.mode; one object per mode, so converters cache them. */
export function messageSchemas(mode: BinaryHandlingMode): MessageSchemas {
  let s = SCHEMAS.get(mode);
  if (s) return s;
  const binary = binaryEncoding(mode);
  const block = Schemas.struct(
    [
      ['prefix', Schemas.string({ optional: true })],
      ['content', { ...binary.schema, optional: true }],
    ],
    { name: 'io.debezium.connector.postgresql.Message', version: 1 },
  );
  const value = Schemas.struct(
    [
      ['op', Schemas.string()],
      ['ts_ms', Schemas.int64({ optional: true })],
      ['source', SOURCE_SCHEMA],
      ['transaction', TRANSACTION_BLOCK_SCHEMA],
      ['message', block],
    ],
    { name: 'io.debezium.connector.postgresql.MessageValue', version: 1 },
  );
  s = { key: MESSAGE_KEY_SCHEMA, value, encode: binary.encode };
  SCHEMAS.set(mode, s);
  return s;
}

/**
 * `<topic.prefix>.message`, whatever topic.naming.strategy and topic.delimiter say:
 * Debezium's LogicalDecodingMessageMonitor names it so, outside the naming strategy.
 */
export function messageTopic(topicPrefix: string): string {
  return `${topicPrefix}.message`;
}

/** message.prefix.include.list / message.prefix.exclude.list; at most one is non-empty. */
export class MessagePrefixFilter {
  private readonly include: RegExp[];
  private readonly exclude: RegExp[];

  constructor(lists: { include: readonly string[]; exclude: readonly string[] }) {
    // Anchored and case-insensitive: Debezium's Predicates.includes matches so.
    const anchored = (ps: readonly string[]) => ps.map((p) => new RegExp(`^(?:${p})$`, 'i'));
    this.include = anchored(lists.include);
    this.exclude = anchored(lists.exclude);
  }

  includes(prefix: string): boolean {
    if (this.include.length > 0) return this.include.some((r) => r.test(prefix));
    return !this.exclude.some((r) => r.test(prefix));
  }
}

/** Everything a message record needs besides the message. */
export interface MessagePosition {
  topicPrefix: string;
  database: string;
  sourcePartition: SourcePartition;
  /** The message's LSN (its XLogData start). */
  lsn: Lsn;
  /** The transaction's xid; null for a non-transactional message. */
  txId: number | null;
  /** Commit time of its transaction, or the processing time when non-transactional, epoch ms. */
  tsMs: number;
  /** Debezium's `sequence` first element: the last completely processed LSN. */
  lastCommitLsn: Lsn | null;
  transaction: TransactionBlock | null;
  nowMs: number;
  offset: SourceOffset;
}

export function messageRecord(
  schemas: MessageSchemas,
  prefix: string,
  content: Buffer,
  pos: MessagePosition,
): SourceRecord {
  const last = pos.lastCommitLsn === null ? 'null' : `"${pos.lastCommitLsn}"`;
  return {
    topic: messageTopic(pos.topicPrefix),
    keySchema: schemas.key,
    key: { prefix },
    valueSchema: schemas.value,
    value: {
      op: 'm',
      ts_ms: pos.nowMs,
      source: {
        version: CONNECTOR_VERSION,
        connector: 'postgresql',
        name: pos.topicPrefix,
        ts_ms: pos.tsMs,
        snapshot: 'false',
        db: pos.database,
        sequence: `[${last},"${pos.lsn}"]`,
        // A message belongs to no table: Debezium's source block has "" for both.
        schema: '',
        table: '',
        txId: pos.txId,
        lsn: pos.lsn,
        xmin: null,
      },
      transaction: pos.transaction,
      message: { prefix, content: schemas.encode(content) },
    },
    timestamp: pos.nowMs,
    sourcePartition: pos.sourcePartition,
    sourceOffset: pos.offset,
  };
}

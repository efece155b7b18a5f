/**
 * Errors of the partition log, as values with a kind.
 *
 * LogError is what the server maps to a Kafka error code: `kafkaError` is the Kafka
 * error NAME (as in Kafka's Errors enum), so the mapping to a number lives in the
 * protocol's one error table and not here. Storage corruption that recovery repairs
 * has its own types (CorruptIndexError here, CorruptRecordError in src/protocol):
 * they never reach a client. An I/O failure of the log's own files (a full disk, a
 * failing device) reaches the client as KAFKA_STORAGE_ERROR (`storageError`).
 */

export type KafkaErrorName =
  | 'INVALID_RECORD'
  | 'INVALID_TIMESTAMP'
  | 'MESSAGE_TOO_LARGE'
  | 'CORRUPT_MESSAGE'
  | 'OFFSET_OUT_OF_RANGE'
  | 'TOPIC_ALREADY_EXISTS'
  | 'INVALID_CONFIG'
  | 'INVALID_PARTITIONS'
  | 'UNKNOWN_TOPIC_OR_PARTITION'
  | 'UNKNOWN_TOPIC_ID'
  | 'RECORD_LIST_TOO_LARGE'
  | 'INVALID_TOPIC_EXCEPTION'
  | 'INVALID_REQUEST'
  | 'KAFKA_STORAGE_ERROR'
  | 'NOT_LEADER_OR_FOLLOWER';

/** One record a batch was refused for (Produce v8+ record_errors): its index in the batch. */
export interface RecordError {
  batchIndex: number;
  message: string;
}

export class LogError extends Error {
  override readonly name = 'LogError';
  constructor(
    readonly kafkaError: KafkaErrorName,
    message: string,
    /** The records that made the batch invalid, when the fault is in records. */
    readonly recordErrors: readonly RecordError[] = [],
  ) {
    super(message);
  }
}

/**
 * Whether `e` is a failed system call (ENOSPC, EDQUOT, EIO, EROFS, ...) rather than a
 * bug: only those become KAFKA_STORAGE_ERROR; anything else stays a thrown error.
 */
export function isIoError(e: unknown): e is NodeJS.ErrnoException {
  return (
    e instanceof Error &&
    typeof (e as NodeJS.ErrnoException).code === 'string' &&
    typeof (e as NodeJS.ErrnoException).syscall === 'string'
  );
}

/**
 * The client's view of an I/O failure while `action` (e.g. "append to t-0"):
 * KAFKA_STORAGE_ERROR, which clients retry, naming the errno so an operator reading a
 * client's log sees "ENOSPC" and not a bare code 56.
 */
export function storageError(action: string, e: NodeJS.ErrnoException): LogError {
  return new LogError('KAFKA_STORAGE_ERROR', `${action} failed: ${e.code} (${e.message})`);
}

/** An index file that fails its sanity check; the index is rebuilt from the log. */
export class CorruptIndexError extends Error {
  override readonly name = 'CorruptIndexError';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
  }
}

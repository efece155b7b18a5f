/**
 * Where finished Parquet files go: a local folder or an S3 bucket, behind one small
 * interface so the writer and recovery do not care which.
 *
 * Contract every store keeps:
 *   - put() makes an object visible whole or not at all (local: temporary name, fsync,
 *     rename, fsync of the folder; S3: one PUT or a completed multipart upload, aborted
 *     on failure). A put that resolves is durable; one that rejects left nothing
 *     visible under the key (an older object with the same key stays as it was).
 *   - put() of the same key again replaces the object: replays overwrite.
 *   - list() sees every object whose put() resolved.
 * Errors are StoreError values: `retriable` says whether the same call may succeed
 * later (network, throttling, 5xx), so the task can retry or fail with the message.
 */

/** What a file holds, for stores that label objects (S3's s3.object.tagging). */
export interface ObjectInfo {
  startOffset: number;
  endOffset: number;
  recordCount: number;
  /**
   * Metadata stored with the object, put atomically with it and read back by
   * readMetadata(): S3 user metadata (x-amz-meta-<name>), a hidden file beside a local
   * file. Row-format files (JSON, ByteArray, Avro) carry their commit group here, where
   * Parquet files carry it in their footer (recovery.ts). Names are lower case.
   */
  metadata?: Readonly<Record<string, string>>;
}

export interface ObjectStore {
  /** For messages: `file:///data/lake` or `s3://bucket (endpoint ...)`. */
  readonly description: string;
  /** Fail early with a clear message when the destination is unusable (no bucket, no access). */
  check(): Promise<void>;
  put(key: string, bytes: Uint8Array, info?: ObjectInfo): Promise<void>;
  /** Keys under a prefix (recursively), in lexicographic order. */
  list(prefix: string): Promise<string[]>;
  /** The last `length` bytes of an object (all of it when shorter). */
  readTail(key: string, length: number): Promise<Uint8Array>;
  /** The metadata put with the object (ObjectInfo.metadata); empty when it has none. */
  readMetadata(key: string): Promise<Record<string, string>>;
  /** The whole object (tests and tools; the sink itself reads only tails). */
  get(key: string): Promise<Uint8Array>;
  /**
   * Remove what interrupted writes left under `prefix` for object names starting with
   * `namePrefix` (the local store's hidden temporary files of a killed process), and
   * return how many. Called when a partition is recovered, while this task has no
   * write of that partition in flight. Stores whose failed writes leave nothing
   * behind need not have it.
   */
  discardIncomplete?(prefix: string, namePrefix: string): Promise<number>;
  close(): Promise<void>;
}

export class StoreError extends Error {
  readonly kind = 'store';
  constructor(
    message: string,
    readonly retriable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreError';
  }
}

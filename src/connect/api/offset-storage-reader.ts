/**
 * Read access to the source offsets committed for one connector (all its tasks share
 * the connector's offset namespace, keyed by source partition).
 */
import type { SourceOffset, SourcePartition } from './connect-record.ts';

export interface OffsetStorageReader {
  /** The committed offset of one partition, or null if none was ever committed. */
  offset(partition: SourcePartition): Promise<SourceOffset | null>;
  /**
   * Committed offsets of several partitions in one read. The map is keyed by the very
   * partition objects passed in (identity, not deep equality); partitions with no
   * committed offset are absent. Partitions match by value (key order is irrelevant).
   */
  offsets(partitions: readonly SourcePartition[]): Promise<Map<SourcePartition, SourceOffset>>;
}

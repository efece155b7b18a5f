/**
 * The REST format of a source connector's offsets (KIP-875): each entry's `partition`
 * and `offset` are the connector's own maps, `offset` null removing that partition's
 * offset. As Kafka Connect's OffsetUtils.validateFormat, values must be primitive
 * (string, number, boolean) or null: a nested object or an array is refused with its
 * message, "Offsets may only contain primitive types as values, but field <key>
 * contains MAP" (or ARRAY), since no source task could have written it and the
 * connector could not read it back.
 *
 * Invariant: `parseSourceOffsets` checks every entry before answering, so a request is
 * refused whole before the connector's alterOffsets is asked or anything is written.
 * Kafka Connect answers this DataException 500 (its exception mapper has no case for
 * it); ours is a `bad-request` (400), since retrying the same body cannot succeed.
 */
import type { SourceOffset as OffsetMap, SourcePartition } from '../api/connect-record.ts';
import { type ConnectorOffset, HerderError } from './herder.ts';

export interface SourceOffset {
  partition: SourcePartition;
  offset: OffsetMap | null;
}

/** Connect's Schema.Type name of a JSON value that is not primitive, else undefined. */
function nonPrimitiveType(value: unknown): string | undefined {
  if (Array.isArray(value)) return 'ARRAY';
  if (typeof value === 'object' && value !== null) return 'MAP';
  return undefined;
}

/** OffsetUtils.validateFormat for one partition or offset map (null passes). */
export function validateOffsetFormat(data: Readonly<Record<string, unknown>> | null): void {
  if (data === null) return;
  for (const [key, value] of Object.entries(data)) {
    const type = nonPrimitiveType(value);
    if (type !== undefined) {
      throw new HerderError(
        'bad-request',
        `Offsets may only contain primitive types as values, but field ${key} contains ${type}`,
      );
    }
  }
}

/** Every entry checked, partition first, before any is returned. */
export function parseSourceOffsets(offsets: readonly ConnectorOffset[]): SourceOffset[] {
  for (const o of offsets) {
    validateOffsetFormat(o.partition);
    validateOffsetFormat(o.offset);
  }
  return offsets.map((o) => ({
    partition: o.partition as SourceOffset['partition'],
    offset: o.offset as SourceOffset['offset'],
  }));
}

/**
 * Transaction markers: the control batches a transaction coordinator writes to every
 * partition of a transaction when it ends (Kafka's EndTransactionMarker).
 *
 * A marker is a v2 batch with the transactional and control attributes set, the
 * transaction's producer id and epoch, base sequence -1, and exactly one record:
 *   key   = version i16 (0) · type i16 (0 ABORT, 1 COMMIT)
 *   value = version i16 (0) · coordinatorEpoch i32
 * Clients read the key's type and never hand control records to applications.
 */
import { decodeRecords, encodeBatch, readBatchHeader } from './record-batch.ts';

export const ControlType = { ABORT: 0, COMMIT: 1 } as const;

export function encodeMarkerBatch(marker: {
  producerId: number;
  producerEpoch: number;
  commit: boolean;
  coordinatorEpoch: number;
  timestamp: number;
}): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(marker.commit ? ControlType.COMMIT : ControlType.ABORT, 2);
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(marker.coordinatorEpoch, 2);
  return encodeBatch({
    records: [{ timestamp: marker.timestamp, key, value }],
    producerId: marker.producerId,
    producerEpoch: marker.producerEpoch,
    baseSequence: -1,
    transactional: true,
    control: true,
  });
}

/**
 * The marker a control batch at `pos` carries: commit or abort, or undefined when it
 * is not a transaction marker (another control type, or an unreadable key).
 */
export function readMarker(buf: Buffer, pos: number): { commit: boolean } | undefined {
  const header = readBatchHeader(buf, pos);
  if (!header.control) return undefined;
  const [record] = decodeRecords(buf, pos);
  const key = record?.key;
  if (!key || key.length < 4) return undefined;
  const type = key.readInt16BE(2);
  if (type === ControlType.COMMIT) return { commit: true };
  if (type === ControlType.ABORT) return { commit: false };
  return undefined;
}

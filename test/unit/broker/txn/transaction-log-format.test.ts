/**
 * The __transaction_state value stays Kafka's v0 layout: a value written before the
 * coordinator kept KIP-360's last epoch in memory reads back unchanged, and the
 * in-memory fields are never written.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeTxnValue,
  encodeTxnValue,
} from '../../../../src/broker/txn/transaction-log-format.ts';

/** An Ongoing transaction of producer 7, epoch 3, on orders-0 and orders-2, by Kafka's v0 schema. */
function v0Value(): Buffer {
  const topic = Buffer.from('orders');
  const b = Buffer.alloc(2 + 8 + 2 + 4 + 1 + 4 + 2 + topic.length + 4 + 8 + 8 + 8);
  let at = b.writeInt16BE(0, 0); // version
  at = b.writeBigInt64BE(7n, at); // producerId
  at = b.writeInt16BE(3, at); // producerEpoch
  at = b.writeInt32BE(60_000, at); // timeoutMs
  at = b.writeInt8(1, at); // status: Ongoing
  at = b.writeInt32BE(1, at); // one topic
  at = b.writeInt16BE(topic.length, at);
  at += topic.copy(b, at);
  at = b.writeInt32BE(2, at); // two partitions
  at = b.writeInt32BE(0, at);
  at = b.writeInt32BE(2, at);
  at = b.writeBigInt64BE(2_000n, at); // lastUpdateTimestampMs
  b.writeBigInt64BE(1_000n, at); // startTimestampMs
  return b;
}

describe('transaction log value', () => {
  it('reads a v0 value, with no KIP-360 retry epoch known', () => {
    expect(decodeTxnValue('t', v0Value())).toEqual({
      transactionalId: 't',
      producerId: 7,
      producerEpoch: 3,
      timeoutMs: 60_000,
      state: 'Ongoing',
      partitions: [
        { topic: 'orders', partition: 0 },
        { topic: 'orders', partition: 2 },
      ],
      lastUpdateTimestamp: 2_000,
      txnStartTimestamp: 1_000,
      lastProducerEpoch: -1,
      previousProducerId: -1,
    });
  });

  it('writes the same v0 bytes whatever the in-memory retry fields hold', () => {
    const meta = decodeTxnValue('t', v0Value())!;
    expect(encodeTxnValue({ ...meta, lastProducerEpoch: 2, previousProducerId: 7 })).toEqual(
      v0Value(),
    );
  });
});

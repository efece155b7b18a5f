/**
 * The log side of transactions, through Fetch and ListOffsets: the last stable offset
 * stops at the oldest open transaction, read_committed reads stop there, and aborted
 * transactions come with the records they overlap.
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../../src/protocol/codec.ts';
import {
  decodeRecords,
  iterateBatches,
  readBatchHeader,
} from '../../../../src/protocol/record-batch.ts';
import { fetchPartition, type RawClient, useRawBroker } from '../server/raw-client.ts';
import {
  addPartitions,
  createTopic,
  endTxn,
  initTxn,
  listLatest,
  produceTxn,
} from './txn-client.ts';

const { client } = useRawBroker({ config: { 'transaction.state.log.num.partitions': 3 } });

const READ_UNCOMMITTED = 0;
const READ_COMMITTED = 1;

async function fetchAt(
  c: RawClient,
  topic: string,
  offset: number,
  isolationLevel: number,
): Promise<Message> {
  return (await fetchPartition(c, topic, 0, offset, { isolationLevel })).responses[0].partitions[0];
}

/** Data record values of a fetch answer (control batches left out), with their offsets. */
function values(records: Buffer): string[] {
  const out: string[] = [];
  for (const { position } of iterateBatches(records)) {
    if (readBatchHeader(records, position).control) continue;
    for (const r of decodeRecords(records, position)) out.push(`${r.offset}:${r.value}`);
  }
  return out;
}

describe('last stable offset', () => {
  it('stops at the first offset of the oldest open transaction, for ListOffsets and Fetch', async () => {
    const c = await client();
    await createTopic(c, 'lso');
    const a = await initTxn(c, 'lso-a');
    const b = await initTxn(c, 'lso-b');
    await addPartitions(c, a, 'lso', [0]);
    await addPartitions(c, b, 'lso', [0]);
    await produceTxn(c, a, 'lso', 0, ['a1'], 0); // offset 0
    await produceTxn(c, b, 'lso', 0, ['b1'], 0); // offset 1
    await produceTxn(c, a, 'lso', 0, ['a2'], 1); // offset 2

    expect(await listLatest(c, 'lso', READ_UNCOMMITTED)).toBe(3n);
    expect(await listLatest(c, 'lso', READ_COMMITTED)).toBe(0n);
    const open = await fetchAt(c, 'lso', 0, READ_COMMITTED);
    expect(open).toMatchObject({ highWatermark: 3n, lastStableOffset: 0n });
    expect(values(open.records)).toEqual([]);
    expect(values((await fetchAt(c, 'lso', 0, READ_UNCOMMITTED)).records)).toEqual([
      '0:a1',
      '1:b1',
      '2:a2',
    ]);

    // a commits (marker at 3): b's first offset now holds the LSO.
    expect(await endTxn(c, a, true)).toBe(0);
    expect(await listLatest(c, 'lso', READ_COMMITTED)).toBe(1n);
    const partly = await fetchAt(c, 'lso', 0, READ_COMMITTED);
    expect(partly.lastStableOffset).toBe(1n);
    expect(values(partly.records)).toEqual(['0:a1']);

    // b aborts (marker at 4): everything is decided, and b's records are reported aborted.
    expect(await endTxn(c, b, false)).toBe(0);
    expect(await listLatest(c, 'lso', READ_COMMITTED)).toBe(5n);
    const done = await fetchAt(c, 'lso', 0, READ_COMMITTED);
    expect(done).toMatchObject({ highWatermark: 5n, lastStableOffset: 5n });
    expect(values(done.records)).toEqual(['0:a1', '1:b1', '2:a2']);
    expect(done.abortedTransactions).toEqual([{ producerId: b.producerId, firstOffset: 1n }]);
    // Read from after b's records: its transaction still overlaps (its marker is later).
    expect((await fetchAt(c, 'lso', 3, READ_COMMITTED)).abortedTransactions).toEqual([
      { producerId: b.producerId, firstOffset: 1n },
    ]);
    // Past the abort marker, nothing is reported.
    expect((await fetchAt(c, 'lso', 5, READ_COMMITTED)).abortedTransactions).toEqual([]);
  });

  it('writes a COMMIT or ABORT control batch to every partition of the transaction', async () => {
    const c = await client();
    await createTopic(c, 'marked-a');
    await createTopic(c, 'marked-b');
    const p = await initTxn(c, 'marked');
    await addPartitions(c, p, 'marked-a', [0]);
    await addPartitions(c, p, 'marked-b', [0]);
    await produceTxn(c, p, 'marked-a', 0, ['x'], 0);
    await produceTxn(c, p, 'marked-b', 0, ['y'], 0);
    expect(await endTxn(c, p, true)).toBe(0);
    for (const topic of ['marked-a', 'marked-b']) {
      const records: Buffer = (await fetchAt(c, topic, 0, READ_COMMITTED)).records;
      const batches = [...iterateBatches(records)].map(({ position }) =>
        readBatchHeader(records, position),
      );
      expect(batches.map((h) => [h.baseOffset, h.transactional, h.control, h.producerId])).toEqual([
        [0, true, false, Number(p.producerId)],
        [1, true, true, Number(p.producerId)],
      ]);
      const [marker] = decodeRecords(records, [...iterateBatches(records)][1]!.position);
      // Key: version 0, type 1 (COMMIT).
      expect([...marker!.key!]).toEqual([0, 0, 0, 1]);
    }
  });
});

/**
 * Transactions survive a broker restart: the coordinator's state comes back from
 * __transaction_state (an open transaction is still open and can be aborted by the
 * next InitProducerId), the LSO and aborted-transaction index come back from the
 * partition (producer snapshots, .txnindex, or the log itself when those are gone or
 * corrupt), and transactional offsets stay committed, or pending.
 */
import { appendFileSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../../src/protocol/api-keys.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { fetchPartition, RawClient } from '../../unit/broker/server/raw-client.ts';
import {
  addOffsets,
  addPartitions,
  createTopic,
  endTxn,
  initTxn,
  produceTxn,
  txnOffsetCommit,
} from '../../unit/broker/txn/txn-client.ts';

const config = { 'transaction.state.log.num.partitions': 3 };

async function withBroker<T>(
  dataDir: string,
  work: (c: RawClient, b: TestBroker) => Promise<T>,
): Promise<T> {
  const b = await startTestBroker({ dataDir, config });
  const c = await RawClient.connect(b.port);
  try {
    return await work(c, b);
  } finally {
    c.close();
    await b.stop();
  }
}

async function committedOffset(c: RawClient, groupId: string, topic: string): Promise<bigint> {
  const res = await c.request(ApiKey.OffsetFetch, 5, {
    groupId,
    topics: [{ name: topic, partitionIndexes: [0] }],
  });
  return res.topics[0].partitions[0].committedOffset;
}

const damage: Record<string, (dir: string) => void> = {
  'a clean restart': () => {},
  'a restart without producer snapshots': (dir) => {
    for (const f of readdirSync(dir)) if (f.endsWith('.snapshot')) unlinkSync(join(dir, f));
  },
  'a restart with a corrupt .txnindex': (dir) => {
    const index = readdirSync(dir).find((f) => f.endsWith('.txnindex'));
    if (!index) throw new Error('no .txnindex to corrupt');
    appendFileSync(join(dir, index), Buffer.from([1, 2, 3]));
  },
};

describe('transactions across a broker restart', () => {
  it.each(Object.keys(damage))(
    'keep committed, aborted and open transactions after %s',
    async (how) => {
      const dataDir = useTmpDir('txn-restart-');
      const before = await withBroker(dataDir, async (c) => {
        await createTopic(c, 'kept');
        await createTopic(c, 'kept-in');
        const committed = await initTxn(c, 'committed-id');
        await addPartitions(c, committed, 'kept', [0]);
        await produceTxn(c, committed, 'kept', 0, ['c1'], 0); // 0
        await addOffsets(c, committed, 'g-committed');
        await txnOffsetCommit(c, committed, 'g-committed', 'kept-in', 5);
        expect(await endTxn(c, committed, true)).toBe(0); // marker 1

        const aborted = await initTxn(c, 'aborted-id');
        await addPartitions(c, aborted, 'kept', [0]);
        await produceTxn(c, aborted, 'kept', 0, ['a1'], 0); // 2
        expect(await endTxn(c, aborted, false)).toBe(0); // marker 3

        const open = await initTxn(c, 'open-id');
        await addPartitions(c, open, 'kept', [0]);
        await produceTxn(c, open, 'kept', 0, ['o1'], 0); // 4
        await addOffsets(c, open, 'g-open');
        await txnOffsetCommit(c, open, 'g-open', 'kept-in', 7);
        return { aborted, open };
      });
      damage[how]!(join(dataDir, 'kept-0'));

      await withBroker(dataDir, async (c) => {
        const p = (await fetchPartition(c, 'kept', 0, 0)).responses[0].partitions[0];
        expect(p).toMatchObject({ highWatermark: 5n, lastStableOffset: 4n });
        expect(p.abortedTransactions).toEqual([
          { producerId: before.aborted.producerId, firstOffset: 2n },
        ]);
        expect(await committedOffset(c, 'g-committed', 'kept-in')).toBe(5n);
        expect(await committedOffset(c, 'g-open', 'kept-in')).toBe(-1n);

        // The coordinator still knows the open transaction: a new producer aborts it
        // (told to retry while it does), then gets the epoch after the fencing one.
        expect((await initTxn(c, 'open-id')).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
        const next = await initTxn(c, 'open-id');
        expect(next).toMatchObject({
          errorCode: 0,
          producerId: before.open.producerId,
          producerEpoch: 2,
        });
        const after = (await fetchPartition(c, 'kept', 0, 0)).responses[0].partitions[0];
        expect(after).toMatchObject({ highWatermark: 6n, lastStableOffset: 6n });
        expect(after.abortedTransactions).toEqual([
          { producerId: before.aborted.producerId, firstOffset: 2n },
          { producerId: before.open.producerId, firstOffset: 4n },
        ]);
        expect(await committedOffset(c, 'g-open', 'kept-in')).toBe(-1n);
      });
    },
  );
});

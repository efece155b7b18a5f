/**
 * A broker killed with SIGKILL at each crash point of a transaction's end, all in one
 * process: before EndTxn (open), after the decision is durable but before any marker
 * (PrepareCommit), and during the marker writes, with some partitions of the
 * transaction marked and the others not, for a commit and for an abort, the
 * __consumer_offsets partition of their offsets among the unmarked ones.
 *
 * A kill from outside cannot land between two markers, so the child broker
 * (helpers/broker-child.ts) runs with the test-only hook CONNECT_TEST_STALL_MARKERS
 * (src/broker/txn/marker-stall-hook.ts): each listed transaction writes that many
 * markers and no more, and the test kills the process with SIGKILL once all of them
 * stand where it wants; the raw connections to it die with it. After the restart the coordinator
 * completes each decided transaction and keeps the open one open (pinning the LSO)
 * until the next producer of its id fences and aborts it; read_committed readers
 * then see exactly the committed records.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { ApiKey } from '../../../src/protocol/api-keys.ts';
import type { Message } from '../../../src/protocol/codec.ts';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { consumeAll } from '../../conformance/helpers/kcat.ts';
import { useBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { waitFor } from '../../helpers/wait.ts';
import { fetchPartition, RawClient } from '../../unit/broker/server/raw-client.ts';
import {
  addOffsets,
  addPartitions,
  createTopic,
  endTxn,
  initTxn,
  produceTxn,
  type TxnProducer,
  txnOffsetCommit,
} from '../../unit/broker/txn/txn-client.ts';
import { useBrokerChild } from './helpers/broker-child-process.ts';

const TOPIC = 'orders';
const PARTITIONS = [0, 1, 2];
// Few internal partitions keep both starts quick; the restart reads the same layout.
const config = {
  'transaction.state.log.num.partitions': 3,
  'offsets.topic.num.partitions': 4,
  'group.initial.rebalance.delay.ms': 0,
};

/**
 * Markers each transaction may write, in the order they end: 'done' all 3; 'commit-cut'
 * 1 of its 4 (orders-0); 'abort-cut' 2 of 4 (orders-0, orders-1); 'prepared' none.
 */
const STALL_MARKERS = '3,1,2,0';

/** ListOffsets latest of every partition of TOPIC: the high watermark, or the LSO with read_committed. */
async function latest(c: RawClient, isolationLevel: 0 | 1): Promise<bigint[]> {
  const res = await c.request(ApiKey.ListOffsets, 2, {
    replicaId: -1,
    isolationLevel,
    topics: [
      { name: TOPIC, partitions: PARTITIONS.map((p) => ({ partitionIndex: p, timestamp: -1n })) },
    ],
  });
  return res.topics[0].partitions.map((p: Message) => p.offset);
}

async function states(c: RawClient, ids: string[]): Promise<Record<string, string>> {
  const res = await c.request(ApiKey.DescribeTransactions, 0, { transactionalIds: ids });
  return Object.fromEntries(
    res.transactionStates.map((t: Message) => [t.transactionalId, t.transactionState]),
  );
}

async function committedOffset(c: RawClient, groupId: string): Promise<bigint> {
  const res = await c.request(ApiKey.OffsetFetch, 5, {
    groupId,
    topics: [{ name: 'orders-in', partitionIndexes: [0] }],
  });
  return res.topics[0].partitions[0].committedOffset;
}

describe('a broker killed with SIGKILL at each point of ending a transaction', () => {
  it('completes every decided transaction at restart, aborts the open one when fenced, and loses or shows nothing', async () => {
    const dataDir = useTmpDir('txn-marker-crash-');
    const first = await useBrokerChild(dataDir, config, {
      CONNECT_TEST_STALL_MARKERS: STALL_MARKERS,
    });
    const c = await RawClient.connect(first.port);
    await createTopic(c, TOPIC, PARTITIONS.length);
    await createTopic(c, 'orders-in');
    // One record per partition, each transaction at the same offset of every partition.
    const begin = async (id: string): Promise<TxnProducer> => {
      const p = await initTxn(c, id);
      expect(await addPartitions(c, p, TOPIC, PARTITIONS)).toEqual([0, 0, 0]);
      for (const partition of PARTITIONS) {
        const answer = await produceTxn(c, p, TOPIC, partition, [`${id}-${partition}`], 0);
        expect(answer.errorCode).toBe(0);
      }
      return p;
    };
    const done = await begin('done'); // offset 0, its COMMIT marker at 1
    expect(await endTxn(c, done, true)).toBe(0);
    const open = await begin('open'); // 2: never ended
    const commitCut = await begin('commit-cut'); // 3
    expect(await addOffsets(c, commitCut, 'g-commit')).toBe(0);
    expect(await txnOffsetCommit(c, commitCut, 'g-commit', 'orders-in', 5)).toBe(0);
    const abortCut = await begin('abort-cut'); // 4
    expect(await addOffsets(c, abortCut, 'g-abort')).toBe(0);
    expect(await txnOffsetCommit(c, abortCut, 'g-abort', 'orders-in', 7)).toBe(0);
    const prepared = await begin('prepared'); // 5
    expect(await latest(c, 0)).toEqual([6n, 6n, 6n]);

    // Each EndTxn stalls in its markers and is never answered: one connection each, as
    // a connection's answers come in order.
    const endStalling = async (p: TxnProducer, commit: boolean) => {
      const own = await RawClient.connect(first.port);
      endTxn(own, p, commit).catch(() => {});
    };
    await endStalling(commitCut, true);
    await waitFor('the COMMIT marker of commit-cut on orders-0', async () =>
      (await latest(c, 0))[0] === 7n ? true : undefined,
    );
    await endStalling(abortCut, false);
    await waitFor('the ABORT markers of abort-cut on orders-0 and orders-1', async () =>
      (await latest(c, 0))[1] === 7n ? true : undefined,
    );
    await endStalling(prepared, true);
    await waitFor('prepared in PrepareCommit', async () =>
      (await states(c, ['prepared'])).prepared === 'PrepareCommit' ? true : undefined,
    );
    expect(await latest(c, 0)).toEqual([8n, 7n, 6n]);
    expect(await states(c, ['open', 'commit-cut', 'abort-cut'])).toEqual({
      open: 'Ongoing',
      'commit-cut': 'PrepareCommit',
      'abort-cut': 'PrepareAbort',
    });
    expect(await first.kill()).toBe('SIGKILL');

    const b = await useBroker({ dataDir, config });
    const after = await RawClient.connect(b.port);
    onTestFinished(() => after.close());
    expect(await states(after, ['done', 'open', 'commit-cut', 'abort-cut', 'prepared'])).toEqual({
      done: 'CompleteCommit',
      open: 'Ongoing',
      'commit-cut': 'CompleteCommit',
      'abort-cut': 'CompleteAbort',
      prepared: 'CompleteCommit',
    });
    // Every partition got the missing markers (a second one where it had one); the open
    // transaction still holds the LSO at its first offset.
    expect(await latest(after, 0)).toEqual([11n, 10n, 9n]);
    expect(await latest(after, 1)).toEqual([2n, 2n, 2n]);
    expect(await committedOffset(after, 'g-commit')).toBe(5n);
    expect(await committedOffset(after, 'g-abort')).toBe(-1n);

    // The next producer of 'open' (kafkajs, which retries CONCURRENT_TRANSACTIONS while
    // the coordinator aborts it) fences it.
    const successor = kafka(b.bootstrap).producer({
      transactionalId: 'open',
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await successor.connect();
    onTestFinished(() => successor.disconnect());
    // kafkajs sends the transactional InitProducerId with the first transaction.
    await (await successor.transaction()).abort();
    expect(await states(after, ['open'])).toEqual({ open: 'Empty' });
    expect(await latest(after, 1)).toEqual(await latest(after, 0));
    for (const partition of PARTITIONS) {
      const part = (await fetchPartition(after, TOPIC, partition, 0)).responses[0].partitions[0];
      // Once each, though orders-0 and orders-1 carry two ABORT markers of abort-cut;
      // listed in the order they were aborted.
      expect(part.abortedTransactions, `orders-${partition}`).toEqual([
        { producerId: abortCut.producerId, firstOffset: 4n },
        { producerId: open.producerId, firstOffset: 2n },
      ]);
    }
    const seen = await consumeAll(b.bootstrap, TOPIC, ['-X', 'isolation.level=read_committed']);
    expect(seen.map((r) => r.value).sort()).toEqual(
      ['done', 'commit-cut', 'prepared']
        .flatMap((id) => PARTITIONS.map((p) => `${id}-${p}`))
        .sort(),
    );
  });
});

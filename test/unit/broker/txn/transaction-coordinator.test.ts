/**
 * The transaction coordinator through the wire protocol: FindCoordinator for
 * transactional ids, InitProducerId's epoch bumps and timeout check, the state rules
 * of AddPartitionsToTxn / EndTxn, and the fencing error each request version gets.
 */
import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { readBatchHeader } from '../../../../src/protocol/record-batch.ts';
import { fetchPartition, useRawBroker } from '../server/raw-client.ts';
import {
  addOffsets,
  addPartitions,
  createTopic,
  endTxn,
  initTxn,
  produceTxn,
  txnOffsetCommit,
} from './txn-client.ts';

const { client, broker } = useRawBroker({
  config: { 'transaction.max.timeout.ms': 120_000, 'transaction.state.log.num.partitions': 3 },
});

describe('FindCoordinator', () => {
  it('names this broker for a transactional id and refuses unknown key types', async () => {
    const c = await client();
    const txn = await c.request(ApiKey.FindCoordinator, 2, { key: 'some-txn', keyType: 1 });
    expect(txn).toMatchObject({ errorCode: 0, nodeId: 1, host: '127.0.0.1', port: broker().port });
    const other = await c.request(ApiKey.FindCoordinator, 2, { key: 'x', keyType: 7 });
    expect(other.errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });
});

describe('InitProducerId with a transactional id', () => {
  it('refuses a timeout above transaction.max.timeout.ms, or not positive', async () => {
    const c = await client();
    expect((await initTxn(c, 'too-long', 120_001)).errorCode).toBe(
      ErrorCode.INVALID_TRANSACTION_TIMEOUT,
    );
    expect((await initTxn(c, 'zero', 0)).errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    expect((await initTxn(c, 'just-right', 120_000)).errorCode).toBe(0);
  });

  it('keeps the producer id and bumps the epoch on every call', async () => {
    const c = await client();
    const a = await initTxn(c, 'bumps');
    const b = await initTxn(c, 'bumps');
    const other = await initTxn(c, 'another-id');
    expect(a).toMatchObject({ errorCode: 0, producerEpoch: 0 });
    expect(b).toMatchObject({ errorCode: 0, producerId: a.producerId, producerEpoch: 1 });
    expect(other.producerId).not.toBe(a.producerId);
  });

  it('v3+ resumes from the current epoch (KIP-360); a retry of that init, its answer lost, gets the same epoch again', async () => {
    const c = await client();
    const first = await initTxn(c, 'kip-360-retry', 60_000, 4);
    const current = { producerId: first.producerId, producerEpoch: 0 };
    const resumed = await initTxn(c, 'kip-360-retry', 60_000, 4, current);
    expect(resumed).toMatchObject({ errorCode: 0, producerId: first.producerId, producerEpoch: 1 });
    // The producer never saw epoch 1 and asks again with epoch 0.
    expect(await initTxn(c, 'kip-360-retry', 60_000, 4, current)).toMatchObject({
      errorCode: 0,
      producerId: first.producerId,
      producerEpoch: 1,
    });
    // Once it has epoch 1, naming it bumps again.
    expect(
      await initTxn(c, 'kip-360-retry', 60_000, 4, { ...current, producerEpoch: 1 }),
    ).toMatchObject({ errorCode: 0, producerEpoch: 2 });
  });

  it('v3+ refuses an epoch that is neither current nor a retry: INVALID_PRODUCER_EPOCH before v4, PRODUCER_FENCED from v4', async () => {
    const c = await client();
    const first = await initTxn(c, 'kip-360', 60_000, 3);
    await initTxn(c, 'kip-360', 60_000, 3, { producerId: first.producerId, producerEpoch: 0 });
    // A new producer of the id takes epoch 2: neither 0 nor 1 may resume or retry now.
    expect(await initTxn(c, 'kip-360', 60_000, 3)).toMatchObject({
      errorCode: 0,
      producerEpoch: 2,
    });
    for (const producerEpoch of [0, 1]) {
      const stale = { producerId: first.producerId, producerEpoch };
      expect((await initTxn(c, 'kip-360', 60_000, 3, stale)).errorCode).toBe(
        ErrorCode.INVALID_PRODUCER_EPOCH,
      );
      expect((await initTxn(c, 'kip-360', 60_000, 4, stale)).errorCode).toBe(
        ErrorCode.PRODUCER_FENCED,
      );
    }
    const otherId = { producerId: first.producerId + 1000n, producerEpoch: 2 };
    expect((await initTxn(c, 'kip-360', 60_000, 4, otherId)).errorCode).toBe(
      ErrorCode.PRODUCER_FENCED,
    );
  });

  it('aborts the transaction the previous epoch left open under a bumped epoch, answering CONCURRENT_TRANSACTIONS; the retry gets the next epoch', async () => {
    const c = await client();
    await createTopic(c, 'left-open');
    const old = await initTxn(c, 'left-open-id');
    expect(await addPartitions(c, old, 'left-open', [0])).toEqual([0]);
    expect(await produceTxn(c, old, 'left-open', 0, ['a', 'b'], 0)).toMatchObject({
      errorCode: 0,
      baseOffset: 0n,
    });
    const before = (await fetchPartition(c, 'left-open', 0, 0)).responses[0].partitions[0];
    expect(before).toMatchObject({ highWatermark: 2n, lastStableOffset: 0n });
    expect(before.records.length).toBe(0);

    expect(await initTxn(c, 'left-open-id')).toMatchObject({
      errorCode: ErrorCode.CONCURRENT_TRANSACTIONS,
      producerId: -1n,
      producerEpoch: -1,
    });
    const after = (await fetchPartition(c, 'left-open', 0, 0)).responses[0].partitions[0];
    // The ABORT marker is at offset 2; everything is decided.
    expect(after).toMatchObject({ highWatermark: 3n, lastStableOffset: 3n });
    expect(after.abortedTransactions).toEqual([{ producerId: old.producerId, firstOffset: 0n }]);
    // The marker carries the fencing epoch, 1, which no producer was given.
    const marker = (await fetchPartition(c, 'left-open', 0, 2)).responses[0].partitions[0];
    expect(readBatchHeader(marker.records, 0)).toMatchObject({
      baseOffset: 2,
      control: true,
      producerEpoch: 1,
    });
    // The fenced producer's next batch is refused.
    expect((await produceTxn(c, old, 'left-open', 0, ['c'], 2)).errorCode).toBe(
      ErrorCode.INVALID_PRODUCER_EPOCH,
    );
    expect(await initTxn(c, 'left-open-id')).toMatchObject({
      errorCode: 0,
      producerId: old.producerId,
      producerEpoch: 2,
    });
  });

  it('fences a KIP-360 producer that resumes with its transaction still open: the retry is refused', async () => {
    const c = await client();
    await createTopic(c, 'resume-open');
    const p = await initTxn(c, 'resume-open-id', 60_000, 4);
    await addPartitions(c, p, 'resume-open', [0]);
    const named = { producerId: p.producerId, producerEpoch: p.producerEpoch };
    expect((await initTxn(c, 'resume-open-id', 60_000, 4, named)).errorCode).toBe(
      ErrorCode.CONCURRENT_TRANSACTIONS,
    );
    expect((await initTxn(c, 'resume-open-id', 60_000, 4, named)).errorCode).toBe(
      ErrorCode.PRODUCER_FENCED,
    );
  });
});

describe('transaction state rules', () => {
  it('refuses transactional records for a partition not added to the transaction', async () => {
    const c = await client();
    await createTopic(c, 'not-added', 2);
    const p = await initTxn(c, 'not-added-id');
    expect(await addPartitions(c, p, 'not-added', [0])).toEqual([0]);
    expect((await produceTxn(c, p, 'not-added', 1, ['x'], 0)).errorCode).toBe(
      ErrorCode.INVALID_TXN_STATE,
    );
    expect((await produceTxn(c, p, 'not-added', 0, ['x'], 0)).errorCode).toBe(0);
  });

  it('adds nothing when a partition does not exist, naming it and not attempting the rest', async () => {
    const c = await client();
    await createTopic(c, 'one-partition');
    const p = await initTxn(c, 'unknown-partition-id');
    expect(await addPartitions(c, p, 'one-partition', [0, 5])).toEqual([
      ErrorCode.OPERATION_NOT_ATTEMPTED,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
    expect(await endTxn(c, p, true)).toBe(ErrorCode.INVALID_TXN_STATE);
  });

  it('EndTxn: a retried decision succeeds, the opposite one and one without a transaction are INVALID_TXN_STATE', async () => {
    const c = await client();
    await createTopic(c, 'decisions');
    const p = await initTxn(c, 'decisions-id');
    expect(await endTxn(c, p, true)).toBe(ErrorCode.INVALID_TXN_STATE);
    await addPartitions(c, p, 'decisions', [0]);
    expect(await endTxn(c, p, true)).toBe(0);
    expect(await endTxn(c, p, true)).toBe(0);
    expect(await endTxn(c, p, false)).toBe(ErrorCode.INVALID_TXN_STATE);
  });

  it('TxnOffsetCommit needs the group added with AddOffsetsToTxn', async () => {
    const c = await client();
    await createTopic(c, 'offsets-in');
    const p = await initTxn(c, 'offsets-id');
    expect(await txnOffsetCommit(c, p, 'g', 'offsets-in', 1)).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(await addOffsets(c, p, 'g')).toBe(0);
    expect(await txnOffsetCommit(c, p, 'g', 'offsets-in', 1)).toBe(0);
    expect(await endTxn(c, p, true)).toBe(0);
  });

  it('a fenced producer gets INVALID_PRODUCER_EPOCH before each API knew PRODUCER_FENCED, and PRODUCER_FENCED after', async () => {
    const c = await client();
    await createTopic(c, 'fenced');
    const old = await initTxn(c, 'fenced-id');
    await initTxn(c, 'fenced-id');
    const cases: Array<[string, (v: number) => Promise<number>, number]> = [
      ['AddPartitionsToTxn', async (v) => (await addPartitions(c, old, 'fenced', [0], v))[0]!, 2],
      ['AddOffsetsToTxn', (v) => addOffsets(c, old, 'g', v), 2],
      ['EndTxn', (v) => endTxn(c, old, true, v), 2],
      ['TxnOffsetCommit', (v) => txnOffsetCommit(c, old, 'g', 'fenced', 0, v), 3],
    ];
    for (const [name, call, from] of cases) {
      expect(await call(from - 1), `${name} v${from - 1}`).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
      expect(await call(from), `${name} v${from}`).toBe(ErrorCode.PRODUCER_FENCED);
    }
  });
});

describe('AddPartitionsToTxn v4 (batched)', () => {
  it('adds to several transactions at once, and with VerifyOnly checks without adding', async () => {
    const c = await client();
    await createTopic(c, 'batched', 2);
    const a = await initTxn(c, 'batched-a');
    const b = await initTxn(c, 'batched-b');
    const tx = (p: typeof a, partitions: number[], verifyOnly = false) => ({
      transactionalId: p.transactionalId,
      producerId: p.producerId,
      producerEpoch: p.producerEpoch,
      verifyOnly,
      topics: [{ name: 'batched', partitions }],
    });
    const codes = (res: Record<string, unknown>) =>
      (
        res.resultsByTransaction as Array<{
          transactionalId: string;
          topicResults: Array<{ results: Array<{ errorCode: number }> }>;
        }>
      ).map((t) => [
        t.transactionalId,
        t.topicResults.flatMap((r) => r.results.map((p) => p.errorCode)),
      ]);
    const added = await c.request(ApiKey.AddPartitionsToTxn, 4, {
      transactions: [tx(a, [0]), tx(b, [1])],
    });
    expect(added.errorCode).toBe(0);
    expect(codes(added)).toEqual([
      ['batched-a', [0]],
      ['batched-b', [0]],
    ]);
    const verified = await c.request(ApiKey.AddPartitionsToTxn, 4, {
      transactions: [tx(a, [0, 1], true), tx({ ...b, producerEpoch: 7 }, [1], true)],
    });
    expect(codes(verified)).toEqual([
      ['batched-a', [0, ErrorCode.INVALID_TXN_STATE]],
      ['batched-b', [ErrorCode.PRODUCER_FENCED]],
    ]);
    // Verifying added nothing: a's partition 1 is still refused for transactional records.
    expect((await produceTxn(c, a, 'batched', 1, ['x'], 0)).errorCode).toBe(
      ErrorCode.INVALID_TXN_STATE,
    );
  });
});

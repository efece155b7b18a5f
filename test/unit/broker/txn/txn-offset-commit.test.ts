/**
 * Offsets committed in a transaction (TxnOffsetCommit) are pending until the
 * transaction's marker: invisible to OffsetFetch (which answers the offset committed
 * before, or UNSTABLE_OFFSET_COMMIT with require_stable), committed by COMMIT, dropped
 * by ABORT. At COMMIT the transactional offset replaces the committed one only if it
 * was written to __consumer_offsets after it (Kafka's appendedBatchOffset rule), and a
 * restart that replays the log answers the same.
 */
import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { startTestBroker } from '../../../helpers/broker.ts';
import { useTmpDir } from '../../../helpers/tmp-dir.ts';
import { RawClient, useRawBroker } from '../server/raw-client.ts';
import { addOffsets, createTopic, endTxn, initTxn, txnOffsetCommit } from './txn-client.ts';

const { client } = useRawBroker({ config: { 'transaction.state.log.num.partitions': 3 } });

async function offsetFetch(
  c: RawClient,
  groupId: string,
  topic: string,
  version: number,
  requireStable = false,
) {
  const res = await c.request(ApiKey.OffsetFetch, version, {
    groupId,
    topics: [{ name: topic, partitionIndexes: [0] }],
    requireStable,
  });
  const p = res.topics[0].partitions[0];
  return { offset: p.committedOffset as bigint, errorCode: p.errorCode as number };
}

async function plainCommit(c: RawClient, groupId: string, topic: string, offset: number) {
  const res = await c.request(ApiKey.OffsetCommit, 2, {
    groupId,
    generationId: -1,
    memberId: '',
    retentionTimeMs: -1n,
    topics: [
      {
        name: topic,
        partitions: [
          { partitionIndex: 0, committedOffset: BigInt(offset), committedMetadata: null },
        ],
      },
    ],
  });
  expect(res.topics[0].partitions[0].errorCode).toBe(0);
}

describe('TxnOffsetCommit', () => {
  it('is pending until COMMIT: the old offset meanwhile, UNSTABLE_OFFSET_COMMIT with require_stable', async () => {
    const c = await client();
    await createTopic(c, 'consumed');
    await plainCommit(c, 'txn-group', 'consumed', 3);
    const p = await initTxn(c, 'offsets-commit');
    expect(await addOffsets(c, p, 'txn-group')).toBe(0);
    expect(await txnOffsetCommit(c, p, 'txn-group', 'consumed', 10)).toBe(0);

    expect(await offsetFetch(c, 'txn-group', 'consumed', 5)).toEqual({ offset: 3n, errorCode: 0 });
    expect(await offsetFetch(c, 'txn-group', 'consumed', 7)).toEqual({ offset: 3n, errorCode: 0 });
    expect(await offsetFetch(c, 'txn-group', 'consumed', 7, true)).toEqual({
      offset: -1n,
      errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT,
    });

    expect(await endTxn(c, p, true)).toBe(0);
    expect(await offsetFetch(c, 'txn-group', 'consumed', 7, true)).toEqual({
      offset: 10n,
      errorCode: 0,
    });
  });

  it('is dropped by ABORT', async () => {
    const c = await client();
    await createTopic(c, 'consumed-aborted');
    await plainCommit(c, 'aborting-group', 'consumed-aborted', 4);
    const p = await initTxn(c, 'offsets-abort');
    await addOffsets(c, p, 'aborting-group');
    expect(await txnOffsetCommit(c, p, 'aborting-group', 'consumed-aborted', 20)).toBe(0);
    expect(await endTxn(c, p, false)).toBe(0);
    expect(await offsetFetch(c, 'aborting-group', 'consumed-aborted', 7, true)).toEqual({
      offset: 4n,
      errorCode: 0,
    });
  });
});

describe('TxnOffsetCommit and a plain OffsetCommit before its marker', () => {
  it('keeps whichever was written last to __consumer_offsets, live and after a restart', async () => {
    const dataDir = useTmpDir('txn-offsets-order-');
    const first = await startTestBroker({
      dataDir,
      config: { 'transaction.state.log.num.partitions': 3 },
    });
    const live: Record<string, bigint> = {};
    try {
      const c = await RawClient.connect(first.port);
      try {
        await createTopic(c, 'in');
        // Group "plain-last": TxnOffsetCommit 10, then OffsetCommit 7, then COMMIT.
        // Group "txn-last": OffsetCommit 7, then TxnOffsetCommit 10, then COMMIT.
        const p = await initTxn(c, 'order-id');
        expect(await addOffsets(c, p, 'plain-last')).toBe(0);
        expect(await addOffsets(c, p, 'txn-last')).toBe(0);
        await plainCommit(c, 'txn-last', 'in', 7);
        expect(await txnOffsetCommit(c, p, 'plain-last', 'in', 10)).toBe(0);
        expect(await txnOffsetCommit(c, p, 'txn-last', 'in', 10)).toBe(0);
        await plainCommit(c, 'plain-last', 'in', 7);
        expect(await endTxn(c, p, true)).toBe(0);
        for (const g of ['plain-last', 'txn-last'])
          live[g] = (await offsetFetch(c, g, 'in', 7)).offset;
      } finally {
        c.close();
      }
    } finally {
      await first.stop();
    }
    expect(live).toEqual({ 'plain-last': 7n, 'txn-last': 10n });

    const second = await startTestBroker({
      dataDir,
      config: { 'transaction.state.log.num.partitions': 3 },
    });
    try {
      const c = await RawClient.connect(second.port);
      try {
        for (const g of ['plain-last', 'txn-last']) {
          expect(await offsetFetch(c, g, 'in', 7, true)).toEqual({ offset: live[g], errorCode: 0 });
        }
      } finally {
        c.close();
      }
    } finally {
      await second.stop();
    }
  });
});

describe('TxnOffsetCommit and an offset tombstone before its marker', () => {
  it('is dropped by OffsetDelete and DeleteGroups: COMMIT brings nothing back, live or after a restart', async () => {
    const dataDir = useTmpDir('txn-offsets-deleted-');
    const config = { 'transaction.state.log.num.partitions': 3 };
    const first = await startTestBroker({ dataDir, config });
    const live: Record<string, bigint> = {};
    try {
      const c = await RawClient.connect(first.port);
      try {
        await createTopic(c, 'in');
        await plainCommit(c, 'offset-deleted', 'in', 3);
        await plainCommit(c, 'group-deleted', 'in', 3);
        const p = await initTxn(c, 'deleting-id');
        for (const g of ['offset-deleted', 'group-deleted']) {
          expect(await addOffsets(c, p, g)).toBe(0);
          expect(await txnOffsetCommit(c, p, g, 'in', 10)).toBe(0);
        }
        const deleted = await c.request(ApiKey.OffsetDelete, 0, {
          groupId: 'offset-deleted',
          topics: [{ name: 'in', partitions: [{ partitionIndex: 0 }] }],
        });
        expect(deleted.errorCode).toBe(0);
        expect(deleted.topics[0].partitions[0].errorCode).toBe(0);
        const groups = await c.request(ApiKey.DeleteGroups, 1, { groupsNames: ['group-deleted'] });
        expect(groups.results[0].errorCode).toBe(0);
        expect(await endTxn(c, p, true)).toBe(0);
        for (const g of ['offset-deleted', 'group-deleted'])
          live[g] = (await offsetFetch(c, g, 'in', 7, true)).offset;
      } finally {
        c.close();
      }
    } finally {
      await first.stop();
    }
    expect(live).toEqual({ 'offset-deleted': -1n, 'group-deleted': -1n });

    const second = await startTestBroker({ dataDir, config });
    try {
      const c = await RawClient.connect(second.port);
      try {
        for (const g of ['offset-deleted', 'group-deleted']) {
          expect(await offsetFetch(c, g, 'in', 7, true), g).toEqual({ offset: -1n, errorCode: 0 });
        }
      } finally {
        c.close();
      }
    } finally {
      await second.stop();
    }
  });
});

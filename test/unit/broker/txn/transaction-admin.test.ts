/** The KIP-664 admin APIs: DescribeTransactions, ListTransactions, DescribeProducers. */
import { describe, expect, it } from 'vitest';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { useRawBroker } from '../server/raw-client.ts';
import { addPartitions, createTopic, endTxn, initTxn, produceTxn } from './txn-client.ts';

const { client } = useRawBroker({ config: { 'transaction.state.log.num.partitions': 3 } });

describe('transaction admin APIs', () => {
  it('describe and list transactional ids, and the producers of a partition with their open transaction', async () => {
    const c = await client();
    await createTopic(c, 'admin-txn', 2);
    const open = await initTxn(c, 'admin-open', 45_000);
    await addPartitions(c, open, 'admin-txn', [0, 1]);
    await produceTxn(c, open, 'admin-txn', 1, ['x', 'y'], 0);
    const done = await initTxn(c, 'admin-done');
    await addPartitions(c, done, 'admin-txn', [0]);
    await endTxn(c, done, true);

    const described = await c.request(ApiKey.DescribeTransactions, 0, {
      transactionalIds: ['admin-open', 'admin-done', 'nobody'],
    });
    expect(described.transactionStates).toMatchObject([
      {
        errorCode: 0,
        transactionalId: 'admin-open',
        transactionState: 'Ongoing',
        transactionTimeoutMs: 45_000,
        producerId: open.producerId,
        producerEpoch: 0,
        topics: [{ topic: 'admin-txn', partitions: [0, 1] }],
      },
      {
        errorCode: 0,
        transactionalId: 'admin-done',
        transactionState: 'CompleteCommit',
        topics: [],
      },
      { errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, transactionalId: 'nobody' },
    ]);

    const listed = await c.request(ApiKey.ListTransactions, 1, {
      stateFilters: ['Ongoing', 'Sleeping'],
      producerIdFilters: [],
      durationFilter: -1n,
    });
    expect(listed).toMatchObject({
      errorCode: 0,
      unknownStateFilters: ['Sleeping'],
      transactionStates: [
        { transactionalId: 'admin-open', producerId: open.producerId, transactionState: 'Ongoing' },
      ],
    });
    const byProducer = await c.request(ApiKey.ListTransactions, 0, {
      stateFilters: [],
      producerIdFilters: [done.producerId],
    });
    expect(
      byProducer.transactionStates.map((t: { transactionalId: string }) => t.transactionalId),
    ).toEqual(['admin-done']);

    const producers = await c.request(ApiKey.DescribeProducers, 0, {
      topics: [{ name: 'admin-txn', partitionIndexes: [1, 7] }],
    });
    expect(producers.topics[0].partitions).toMatchObject([
      {
        partitionIndex: 1,
        errorCode: 0,
        activeProducers: [
          {
            producerId: open.producerId,
            producerEpoch: 0,
            lastSequence: 1,
            currentTxnStartOffset: 0n,
          },
        ],
      },
      { partitionIndex: 7, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, activeProducers: [] },
    ]);
  });
});

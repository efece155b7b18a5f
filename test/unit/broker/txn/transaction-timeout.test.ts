/**
 * A transaction left open past its transaction.timeout.ms is aborted by the broker,
 * which bumps the epoch: the producer that went quiet is fenced.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fetchPartition, useRawBroker } from '../server/raw-client.ts';
import {
  addPartitions,
  createTopic,
  endTxn,
  initTxn,
  listLatest,
  produceTxn,
} from './txn-client.ts';

const { client } = useRawBroker({
  config: {
    'transaction.state.log.num.partitions': 3,
    // Checked often, so the test waits little; the test itself measures nothing.
    'transaction.abort.timed.out.transaction.cleanup.interval.ms': 50,
  },
});

describe('transaction timeout', () => {
  it('aborts a transaction open past its timeout and fences its producer', async () => {
    const c = await client();
    await createTopic(c, 'timed-out');
    const p = await initTxn(c, 'slow-producer', 100);
    await addPartitions(c, p, 'timed-out', [0]);
    expect((await produceTxn(c, p, 'timed-out', 0, ['late'], 0)).errorCode).toBe(0);

    await waitFor('the transaction to be aborted', async () =>
      (await listLatest(c, 'timed-out', 1)) === 2n ? true : undefined,
    );
    const fetched = (await fetchPartition(c, 'timed-out', 0, 0)).responses[0].partitions[0];
    expect(fetched.abortedTransactions).toEqual([{ producerId: p.producerId, firstOffset: 0n }]);
    expect(await endTxn(c, p, true, 2)).toBe(ErrorCode.PRODUCER_FENCED);
    expect((await produceTxn(c, p, 'timed-out', 0, ['later'], 1)).errorCode).toBe(
      ErrorCode.INVALID_PRODUCER_EPOCH,
    );
    // The next producer of the id gets the epoch after the fencing one.
    expect(await initTxn(c, 'slow-producer', 100)).toMatchObject({
      errorCode: 0,
      producerEpoch: 2,
    });
  });
});

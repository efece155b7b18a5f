/**
 * A coordinator that stopped between deciding a transaction (PrepareCommit or
 * PrepareAbort in __transaction_state) and writing its last marker completes it at
 * the next start. The stop is simulated exactly: after a clean stop, the decision is
 * appended to the transaction log as the coordinator would have, with no marker.
 */
import { describe, expect, it } from 'vitest';
import { LogManager } from '../../../src/broker/log/log-manager.ts';
import { TransactionLogStore } from '../../../src/broker/txn/transaction-log-store.ts';
import type { TxnStatus } from '../../../src/broker/txn/transaction-metadata.ts';
import { systemClock } from '../../../src/util/clock.ts';
import { startTestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { fetchPartition, RawClient } from '../../unit/broker/server/raw-client.ts';
import {
  addPartitions,
  createTopic,
  initTxn,
  produceTxn,
} from '../../unit/broker/txn/txn-client.ts';

const config = { 'transaction.state.log.num.partitions': 3 };

describe('prepared transactions at start-up', () => {
  it.each([
    ['PrepareCommit', 'committed', []],
    ['PrepareAbort', 'aborted', ['aborted']],
  ] as const)(
    'a transaction left in %s is %s when the broker starts',
    async (state, _outcome, aborted) => {
      const dataDir = useTmpDir('txn-prepared-');
      let b = await startTestBroker({ dataDir, config });
      let c = await RawClient.connect(b.port);
      await createTopic(c, 'prepared');
      const p = await initTxn(c, 'prepared-id');
      await addPartitions(c, p, 'prepared', [0]);
      await produceTxn(c, p, 'prepared', 0, ['v'], 0);
      c.close();
      await b.stop();

      const logs = LogManager.open({
        dataDir,
        brokerConfig: {},
        clock: systemClock,
        cleanerEnabled: false,
      });
      const store = new TransactionLogStore(logs, {
        partitions: 3,
        segmentBytes: 1 << 20,
        clock: systemClock,
      });
      const ongoing = store.load().get('prepared-id')!;
      expect(ongoing.state).toBe('Ongoing');
      await store.write({ ...ongoing, state: state as TxnStatus });
      await logs.close();

      b = await startTestBroker({ dataDir, config });
      c = await RawClient.connect(b.port);
      try {
        const part = (await fetchPartition(c, 'prepared', 0, 0)).responses[0].partitions[0];
        // The marker at offset 1 decided the transaction.
        expect(part).toMatchObject({ highWatermark: 2n, lastStableOffset: 2n });
        expect(part.abortedTransactions).toEqual(
          aborted.map(() => ({ producerId: p.producerId, firstOffset: 0n })),
        );
        // The coordinator is done with it: the id starts a new epoch at once.
        expect(await initTxn(c, 'prepared-id')).toMatchObject({ errorCode: 0, producerEpoch: 1 });
      } finally {
        c.close();
        await b.stop();
      }
    },
  );
});

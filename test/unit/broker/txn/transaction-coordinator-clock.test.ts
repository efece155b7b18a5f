/**
 * TransactionCoordinator rules that depend on time or on long histories, on a manual
 * clock: transactional.id.expiration.ms, the timeout sweep, epoch exhaustion, and
 * which KIP-360 retries survive what.
 * The transaction log is the real one (TransactionLogStore on a LogManager in a temp
 * dir), so what the coordinator wrote is read back as the next start would.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LogManager } from '../../../../src/broker/log/log-manager.ts';
import { ProducerStateStore } from '../../../../src/broker/producer/producer-state-store.ts';
import { MarkerWriter } from '../../../../src/broker/txn/marker-writer.ts';
import { TransactionCoordinator } from '../../../../src/broker/txn/transaction-coordinator.ts';
import { TransactionLogStore } from '../../../../src/broker/txn/transaction-log-store.ts';
import { MAX_EPOCH } from '../../../../src/broker/txn/transaction-metadata.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { tempDir } from '../log/log-test-helpers.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup() {
  const tmp = tempDir('txn-coordinator-');
  cleanups.push(tmp.remove);
  const clock = new ManualClock(1_000_000);
  const logs = LogManager.open({
    dataDir: tmp.dir,
    brokerConfig: {},
    clock,
    cleanerEnabled: false,
  });
  cleanups.push(() => logs.close());
  logs.createTopic('data', 1, {});
  const store = new TransactionLogStore(logs, { partitions: 2, segmentBytes: 1 << 20, clock });
  let nextId = 100;
  const make = () =>
    new TransactionCoordinator({
      store,
      markers: new MarkerWriter({
        logs,
        producerStates: new ProducerStateStore(getLogger('test')),
        groups: { completeTxnOffsets: () => {} },
        clock,
        logger: getLogger('test'),
      }),
      allocateProducerId: async () => nextId++,
      clock,
      logger: getLogger('test'),
      maxTimeoutMs: 60_000,
      idExpirationMs: 3_600_000,
    });
  return { clock, store, coordinator: make(), make };
}

describe('TransactionCoordinator on a manual clock', () => {
  it('forgets an id idle past transactional.id.expiration.ms, but not one with an open transaction', async () => {
    const { clock, store, coordinator } = setup();
    await coordinator.initProducerId('idle', 30_000, undefined);
    const busy = await coordinator.initProducerId('busy', 60_000, undefined);
    await coordinator.addPartitions('busy', busy.producerId, busy.producerEpoch, [
      { topic: 'data', partition: 0 },
    ]);
    clock.advance(3_600_000);
    expect(await coordinator.expireIds()).toBe(1);
    expect(coordinator.describe('idle')).toBeUndefined();
    expect([...store.load().keys()]).toEqual(['busy']);
  });

  it('aborts, with the next epoch, only transactions past their own timeout', async () => {
    const { clock, coordinator } = setup();
    const short = await coordinator.initProducerId('short', 10_000, undefined);
    const long = await coordinator.initProducerId('long', 60_000, undefined);
    for (const [id, p] of [
      ['short', short],
      ['long', long],
    ] as const) {
      await coordinator.addPartitions(id, p.producerId, p.producerEpoch, [
        { topic: 'data', partition: 0 },
      ]);
    }
    clock.advance(10_001);
    expect(await coordinator.abortTimedOut()).toBe(1);
    expect(coordinator.describe('short')).toMatchObject({
      state: 'CompleteAbort',
      producerEpoch: 1,
    });
    expect(coordinator.describe('long')).toMatchObject({ state: 'Ongoing', producerEpoch: 0 });
    expect(await coordinator.endTxn('short', short.producerId, 0, true)).toBe('PRODUCER_FENCED');
  });

  it('hands out a new producer id when the epoch is exhausted', async () => {
    const { store, coordinator, make } = setup();
    const first = await coordinator.initProducerId('old', 30_000, undefined);
    const meta = coordinator.describe('old')!;
    // Jump to the last epochs through the log, as a long-lived id would have reached them.
    await store.write({ ...meta, producerEpoch: MAX_EPOCH - 1 });
    const reloaded = make();
    await reloaded.load(store.load());
    const next = await reloaded.initProducerId('old', 30_000, undefined);
    expect(next.error).toBe('NONE');
    expect(next.producerId).not.toBe(first.producerId);
    expect(next.producerEpoch).toBe(0);
  });
  it('a retry of the init that rotated the producer id at the exhausted epoch gets the new id again', async () => {
    const { store, coordinator, make } = setup();
    const first = await coordinator.initProducerId('rotating', 30_000, undefined);
    await store.write({ ...coordinator.describe('rotating')!, producerEpoch: MAX_EPOCH - 1 });
    const reloaded = make();
    await reloaded.load(store.load());
    const exhausted = { producerId: first.producerId, producerEpoch: MAX_EPOCH - 1 };
    const rotated = await reloaded.initProducerId('rotating', 30_000, exhausted);
    expect(rotated).toMatchObject({ error: 'NONE', producerEpoch: 0 });
    expect(rotated.producerId).not.toBe(first.producerId);
    expect(await reloaded.initProducerId('rotating', 30_000, exhausted)).toEqual(rotated);
  });

  it('forgets at a restart the epoch a retry may name, as Kafka does: the retry is then fenced', async () => {
    const { coordinator, store, make } = setup();
    const first = await coordinator.initProducerId('restarted', 30_000, undefined);
    const epoch0 = { producerId: first.producerId, producerEpoch: 0 };
    expect(await coordinator.initProducerId('restarted', 30_000, epoch0)).toMatchObject({
      error: 'NONE',
      producerEpoch: 1,
    });
    const reloaded = make();
    await reloaded.load(store.load());
    expect((await reloaded.initProducerId('restarted', 30_000, epoch0)).error).toBe(
      'PRODUCER_FENCED',
    );
    expect(
      await reloaded.initProducerId('restarted', 30_000, { ...epoch0, producerEpoch: 1 }),
    ).toMatchObject({ error: 'NONE', producerEpoch: 2 });
  });

  it('a producer fenced by its timeout cannot come back as a retry of its last init', async () => {
    const { clock, coordinator } = setup();
    const first = await coordinator.initProducerId('late', 10_000, undefined);
    const epoch0 = { producerId: first.producerId, producerEpoch: 0 };
    await coordinator.initProducerId('late', 10_000, epoch0);
    await coordinator.addPartitions('late', first.producerId, 1, [{ topic: 'data', partition: 0 }]);
    clock.advance(10_001);
    expect(await coordinator.abortTimedOut()).toBe(1);
    for (const producerEpoch of [0, 1]) {
      expect(
        (await coordinator.initProducerId('late', 10_000, { ...epoch0, producerEpoch })).error,
      ).toBe('PRODUCER_FENCED');
    }
  });
});

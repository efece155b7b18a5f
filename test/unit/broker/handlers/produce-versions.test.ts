/**
 * Produce v10 and v11: the current leader and node endpoints with leadership errors
 * (KIP-951), and TRANSACTION_ABORTABLE for a partition outside the transaction
 * (KIP-890 part 1), each against the version before it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BrokerServices } from '../../../../src/broker/handlers/broker-services.ts';
import type { RequestContext } from '../../../../src/broker/handlers/handler.ts';
import { handleProduce } from '../../../../src/broker/handlers/produce.ts';
import { LogManager } from '../../../../src/broker/log/log-manager.ts';
import { LEADER_EPOCH } from '../../../../src/broker/log/partition-log.ts';
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import type { Message } from '../../../../src/protocol/codec.ts';
import { ErrorCode } from '../../../../src/protocol/error-codes.ts';
import { encodeBatch } from '../../../../src/protocol/record-batch.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { tempDir } from '../log/log-test-helpers.ts';
import { useRawBroker } from '../server/raw-client.ts';
import { addPartitions, createTopic, initTxn, type TxnProducer } from '../txn/txn-client.ts';

const { client } = useRawBroker();

const batch = () =>
  encodeBatch({ records: [{ timestamp: 1000, key: Buffer.from('k'), value: Buffer.from('v') }] });

function produceBody(topic: string, partition: number, records: Buffer, transactionalId = null) {
  return {
    transactionalId,
    acks: -1,
    timeoutMs: 1000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  };
}

describe('Produce v10 and v11 over the wire', () => {
  it('answers v10 and v11 as v9 when the append succeeds, naming no leader', async () => {
    const c = await client();
    await createTopic(c, 'produce-v11');
    for (const version of [9, 10, 11]) {
      const res = await c.request(ApiKey.Produce, version, produceBody('produce-v11', 0, batch()));
      const p = res.responses[0].partitionResponses[0];
      expect(p, `v${version}`).toMatchObject({ index: 0, errorCode: ErrorCode.NONE });
      if (version >= 10) {
        expect(p.currentLeader).toEqual({ leaderId: -1, leaderEpoch: -1 });
        expect(res.nodeEndpoints).toEqual([]);
      }
    }
  });

  it('v11 answers a transactional batch for a partition not in the transaction TRANSACTION_ABORTABLE, v10 INVALID_TXN_STATE', async () => {
    const c = await client();
    await createTopic(c, 'not-in-txn', 2);
    const p: TxnProducer = await initTxn(c, 'not-in-txn-id');
    expect(await addPartitions(c, p, 'not-in-txn', [0])).toEqual([0]);
    const txnBatch = (baseSequence: number) =>
      encodeBatch({
        records: [{ timestamp: 1000, key: Buffer.from('k'), value: Buffer.from('t') }],
        producerId: Number(p.producerId),
        producerEpoch: p.producerEpoch,
        baseSequence,
        transactional: true,
      });
    const produceTo = async (version: number, partition: number) => {
      const res = await c.request(ApiKey.Produce, version, {
        ...produceBody('not-in-txn', partition, txnBatch(0)),
        transactionalId: p.transactionalId,
      });
      return res.responses[0].partitionResponses[0].errorCode;
    };
    expect(await produceTo(10, 1)).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(await produceTo(11, 1)).toBe(ErrorCode.TRANSACTION_ABORTABLE);
    // The partition that was added takes the batch at either version.
    expect(await produceTo(11, 0)).toBe(ErrorCode.NONE);
  });
});

describe('Produce v10 on a closed log', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** The handler on a real LogManager whose partition 0 log is closed, as when stopping. */
  async function servicesWithClosedLog(): Promise<BrokerServices> {
    const tmp = tempDir('produce-v10-');
    cleanups.push(tmp.remove);
    const clock = new ManualClock(1_000_000);
    const logs = LogManager.open({
      dataDir: tmp.dir,
      brokerConfig: {},
      clock,
      cleanerEnabled: false,
    });
    cleanups.push(() => logs.close());
    logs.createTopic('closing', 1, {});
    await logs.getLog('closing', 0).close();
    return {
      logs,
      nodeId: 7,
      advertisedHost: 'broker.example',
      port: 19092,
      clock,
      logger: getLogger('test'),
    } as unknown as BrokerServices;
  }

  const context = (apiVersion: number): RequestContext =>
    ({ apiKey: ApiKey.Produce, apiVersion, correlationId: 1, clientId: null }) as RequestContext;

  it('names this node as the current leader and its endpoint with NOT_LEADER_OR_FOLLOWER', async () => {
    const services = await servicesWithClosedLog();
    const res = (await handleProduce(
      produceBody('closing', 0, batch()),
      context(10),
      services,
    )) as Message;
    const p = res.responses[0].partitionResponses[0];
    expect(p.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(p.currentLeader).toEqual({ leaderId: 7, leaderEpoch: LEADER_EPOCH });
    expect(res.nodeEndpoints).toEqual([
      { nodeId: 7, host: 'broker.example', port: 19092, rack: null },
    ]);
  });

  it('v9 answers the same error without leader or endpoints', async () => {
    const services = await servicesWithClosedLog();
    const res = (await handleProduce(
      produceBody('closing', 0, batch()),
      context(9),
      services,
    )) as Message;
    const p = res.responses[0].partitionResponses[0];
    expect(p.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(p.currentLeader).toBeUndefined();
    expect(res.nodeEndpoints).toBeUndefined();
  });
});

/**
 * The Connect stores read their topics with read_committed: a transactional write
 * that is aborted (an exactly-once source task's offsets, a fenced leader's configs)
 * is never applied, a committed one is, and non-transactional writes (the stores'
 * own) are applied as before.
 */
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { KafkaConfigBackingStore } from '../../../src/connect/storage/kafka-config-backing-store.ts';
import { KafkaOffsetBackingStore } from '../../../src/connect/storage/kafka-offset-backing-store.ts';
import { ClusterClient } from '../../../src/protocol/client/cluster-client.ts';
import { TransactionalProducer } from '../../../src/protocol/client/transactional-producer.ts';
import { getLogger } from '../../../src/util/logger.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';

let broker: TestBroker;
let producer: Producer;
let client: ClusterClient;
const logger = getLogger('test.stores-txn');

beforeAll(async () => {
  broker = await startTestBroker({ config: { 'transaction.state.log.num.partitions': 3 } });
  client = new ClusterClient(broker.bootstrap, { clientId: 'stores-txn-test' });
  producer = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING }).producer({
    idempotent: true,
  });
  await producer.connect();
});

afterAll(async () => {
  await producer?.disconnect();
  client?.close();
  await broker?.stop();
});

async function transactional(id: string): Promise<TransactionalProducer> {
  const p = new TransactionalProducer(new ClusterClient(broker.bootstrap, { clientId: id }), {
    transactionalId: id,
  });
  onTestFinished(() => p.close());
  await p.init();
  return p;
}

const record = (topic: string, key: string, value: string, partition: number | null = 0) => ({
  topic,
  partition,
  key: Buffer.from(key),
  value: Buffer.from(value),
  timestamp: null,
  headers: [],
});

describe('stores reading with read_committed', () => {
  it('the config store never applies an aborted transactional write', async () => {
    const store = new KafkaConfigBackingStore({
      client,
      producer,
      topic: 'configs-txn',
      replicationFactor: -1,
      logger,
      readMaxWaitMs: 20,
    });
    await store.start();
    onTestFinished(() => store.stop());
    await store.putConnectorConfig('plain', { 'connector.class': 'Plain' });

    const txn = await transactional('config-writer');
    txn.beginTransaction();
    await txn.send([
      record('configs-txn', 'connector-aborted', '{"properties":{"connector.class":"Aborted"}}'),
    ]);
    await txn.abortTransaction();
    txn.beginTransaction();
    await txn.send([
      record('configs-txn', 'connector-committed', '{"properties":{"connector.class":"Kept"}}'),
    ]);
    await txn.commitTransaction();
    await store.putConnectorConfig('after', { 'connector.class': 'After' });

    const live = store.snapshot();
    expect([...live.connectorConfigs.keys()].sort()).toEqual(['after', 'committed', 'plain']);

    // A store started afterwards reads the same from the topic.
    const fresh = new KafkaConfigBackingStore({
      client,
      producer,
      topic: 'configs-txn',
      replicationFactor: -1,
      logger,
      readMaxWaitMs: 20,
    });
    await fresh.start();
    onTestFinished(() => fresh.stop());
    expect([...fresh.snapshot().connectorConfigs.keys()].sort()).toEqual([
      'after',
      'committed',
      'plain',
    ]);
  });

  it('the offset store applies source offsets of committed transactions only', async () => {
    const options = {
      client,
      producer,
      topic: 'offsets-txn',
      partitions: 5,
      replicationFactor: -1,
      logger,
    };
    const store = new KafkaOffsetBackingStore(options);
    await store.start();
    onTestFinished(() => store.stop());
    await store.set(new Map([['["src",{"table":"plain"}]', '{"lsn":1}']]));

    const txn = await transactional('offset-writer');
    txn.beginTransaction();
    await txn.send([record('offsets-txn', '["src",{"table":"t"}]', '{"lsn":10}', null)]);
    await txn.commitTransaction();
    txn.beginTransaction();
    await txn.send([record('offsets-txn', '["src",{"table":"t"}]', '{"lsn":99}', null)]);
    await txn.abortTransaction();

    const fresh = new KafkaOffsetBackingStore(options);
    await fresh.start();
    onTestFinished(() => fresh.stop());
    expect(Object.fromEntries(await fresh.entries())).toEqual({
      '["src",{"table":"plain"}]': '{"lsn":1}',
      '["src",{"table":"t"}]': '{"lsn":10}',
    });
  });
});

/**
 * A broker killed with SIGKILL while a transactional producer commits and aborts
 * transactions in a loop: after restart, read_committed readers see every
 * transaction whose commit was acknowledged, none that was aborted, and the one in
 * flight at the kill is decided one way or the other (completed if its commit was
 * prepared, else aborted when the next producer of its id fences it), never half.
 */
import { describe, expect, it } from 'vitest';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { consumeAll } from '../../conformance/helpers/kcat.ts';
import { useBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { useBrokerChild } from './helpers/broker-child-process.ts';

const TOPIC = 'txn-durable';
// The same layout for the killed child and the in-process restart; few internal
// partitions keep both starts quick.
const config = {
  'num.partitions': 2,
  'transaction.state.log.num.partitions': 3,
  'offsets.topic.num.partitions': 4,
};

describe('a broker killed with SIGKILL during transactions', () => {
  it('keeps every acknowledged commit, no abort, and decides the transaction in flight', async () => {
    const dataDir = useTmpDir('txn-crash-');
    const first = await useBrokerChild(dataDir, config);
    const admin = kafka(first.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] });
    await admin.disconnect();
    // Idempotence needs retries; few and short, so the kill ends the loop soon.
    const client = kafka(first.bootstrap, {
      retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 },
    });
    const producer = client.producer({
      transactionalId: 'crashing',
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    const committed: string[] = [];
    const aborted: string[] = [];
    let inFlight: string[] = [];
    try {
      for (let n = 0; ; n++) {
        const values = Array.from({ length: 10 }, (_, i) => `t${n}-${i}`);
        inFlight = values;
        const txn = await producer.transaction();
        await txn.send({ topic: TOPIC, messages: values.map((value) => ({ key: value, value })) });
        if (n === 20) void first.kill();
        if (n % 3 === 2) {
          await txn.abort();
          aborted.push(...values);
        } else {
          await txn.commit();
          committed.push(...values);
        }
        inFlight = [];
      }
    } catch {
      // The kill: the transaction of `inFlight` got no answer.
    }
    await first.process.exited;
    await producer.disconnect().catch(() => {});
    expect(committed.length).toBeGreaterThan(0);

    const second = await useBroker({ dataDir, config });
    // The next producer of the id fences the old one and aborts what it left open.
    const next = kafka(second.bootstrap).producer({
      transactionalId: 'crashing',
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await next.connect();
    // kafkajs sends the transactional InitProducerId with its first transaction.
    await (await next.transaction()).abort();
    await next.disconnect();
    const seen = new Set(
      (await consumeAll(second.bootstrap, TOPIC, ['-X', 'isolation.level=read_committed'])).map(
        (r) => r.value,
      ),
    );
    expect(committed.filter((v) => !seen.has(v))).toEqual([]);
    expect(aborted.filter((v) => seen.has(v))).toEqual([]);
    const ofInFlight = inFlight.filter((v) => seen.has(v));
    expect([0, inFlight.length]).toContain(ofInFlight.length);
    expect(seen.size).toBe(committed.length + ofInFlight.length);
  });
});

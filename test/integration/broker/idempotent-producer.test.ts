import { readdirSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { Partitioners } from 'kafkajs';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ApiKey } from '../../../src/protocol/api-keys.ts';
import { ClientClosedError, ClusterClient } from '../../../src/protocol/client/cluster-client.ts';
import {
  IdempotentProducer,
  type ProducerOptions,
  type ProducerRecord,
} from '../../../src/protocol/client/producer.ts';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { consumeAll } from '../../conformance/helpers/kcat.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { DroppingProxy } from './helpers/dropping-proxy.ts';

/** A broker behind a proxy that drops the responses of chosen Produce requests. */
async function setup(dataDir: string) {
  let broker: TestBroker | undefined;
  let ready: Promise<unknown> = Promise.resolve();
  let drops = 0;
  let produceCount = 0;
  const dropAt = new Set<number>();
  let onDrop: (n: number) => void = () => {};
  const proxy = new DroppingProxy({
    upstreamPort: async () => {
      await ready;
      return broker!.port;
    },
    drop: (apiKey) => {
      if (apiKey !== ApiKey.Produce) return false;
      produceCount++;
      if (!dropAt.has(produceCount)) return false;
      drops++;
      onDrop(produceCount);
      return true;
    },
  });
  await proxy.listen();
  // Clients learn the proxy's address from Metadata, so every connection goes through it.
  broker = await startTestBroker({ dataDir, advertisedPort: proxy.port });
  onTestFinished(async () => {
    await proxy.close();
    await ready.catch(() => {});
    await broker?.stop();
  });
  const restart = (beforeStart: () => void = () => {}) => {
    ready = (async () => {
      await broker!.stop();
      beforeStart();
      broker = await startTestBroker({ dataDir, advertisedPort: proxy.port });
    })();
  };
  return {
    proxy,
    dropAt,
    restart,
    setOnDrop: (f: (n: number) => void) => {
      onDrop = f;
    },
    drops: () => drops,
    settled: () => ready,
  };
}

async function produceAll(bootstrap: string, topic: string, rounds: number, from = 0) {
  const producer = kafka(bootstrap).producer({ idempotent: true, allowAutoTopicCreation: true });
  await producer.connect();
  onTestFinished(() => producer.disconnect());
  for (let i = from; i < from + rounds; i++) {
    await producer.send({
      topic,
      messages: [
        { key: 'k', value: `v${i}` },
        { key: 'k', value: `w${i}` },
      ],
    });
  }
  return producer;
}

describe('idempotent kafkajs producer with lost responses', () => {
  it('retries of a batch whose response was lost are not appended twice', async () => {
    const s = await setup(useTmpDir('idem-'));
    for (const n of [3, 4, 10, 17]) s.dropAt.add(n);
    await produceAll(`127.0.0.1:${s.proxy.port}`, 'idem', 20);
    expect(s.drops()).toBe(4);
    const values = (await consumeAll(`127.0.0.1:${s.proxy.port}`, 'idem')).map((r) => r.value);
    expect(values).toEqual(Array.from({ length: 20 }, (_, i) => [`v${i}`, `w${i}`]).flat());
  });

  it.each([
    ['from its snapshot after a clean restart', false],
    ['from the log after losing its snapshots (as after a crash)', true],
  ])('dedup state survives a broker restart: %s', async (_name, dropSnapshots) => {
    const dataDir = useTmpDir('idem-restart-');
    const s = await setup(dataDir);
    s.dropAt.add(6);
    s.setOnDrop(() =>
      s.restart(() => {
        if (!dropSnapshots) return;
        for (const dir of readdirSync(dataDir).filter((d) => d.startsWith('idem-'))) {
          for (const f of readdirSync(join(dataDir, dir))) {
            if (f.endsWith('.snapshot')) rmSync(join(dataDir, dir, f));
          }
        }
      }),
    );
    await produceAll(`127.0.0.1:${s.proxy.port}`, 'idem-restart', 12);
    await s.settled();
    expect(s.drops()).toBe(1);
    const values = (await consumeAll(`127.0.0.1:${s.proxy.port}`, 'idem-restart')).map(
      (r) => r.value,
    );
    expect(values).toEqual(Array.from({ length: 12 }, (_, i) => [`v${i}`, `w${i}`]).flat());
  });
});

/** Our own producer (src/protocol/client/producer.ts), pipelining up to five sends. */
async function ownProducer(bootstrap: string, options: ProducerOptions = {}) {
  const producer = new IdempotentProducer(new ClusterClient(bootstrap, { clientId: 'test' }), {
    retryBackoffMs: 20,
    ...options,
  });
  onTestFinished(() => producer.close());
  await producer.init();
  return producer;
}

function keyedRecords(topic: string, round: number, perRound: number): ProducerRecord[] {
  return Array.from({ length: perRound }, (_, i) => ({
    topic,
    partition: null,
    key: Buffer.from(`key-${i % 7}`),
    value: Buffer.from(`r${round}-${i}`),
    timestamp: null,
    headers: i % 2 === 0 ? [{ key: 'h', value: Buffer.from(String(i)) }] : [],
  }));
}

/** Sends `rounds` sends of `perRound` records without waiting between them. */
async function pipelined(producer: IdempotentProducer, topic: string, rounds: number) {
  const sends = Array.from({ length: rounds }, (_, round) =>
    producer.send(keyedRecords(topic, round, 10)),
  );
  return Promise.all(sends);
}

describe('IdempotentProducer (protocol client)', () => {
  it('stops retrying InitProducerId once it is closed, with the reason', async () => {
    // Nothing listens on a port just freed: every attempt fails to connect.
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    const retries: Error[] = [];
    const producer = new IdempotentProducer(
      new ClusterClient(`127.0.0.1:${port}`, { clientId: 'test' }),
      // Far beyond the test's timeout: only the close can end init.
      { retryBackoffMs: 20, deliveryTimeoutMs: 600_000, onRetry: (e) => retries.push(e) },
    );
    const init = producer.init();
    init.catch(() => {});
    await vi.waitFor(() => expect(retries.length).toBeGreaterThan(1), { timeout: 5_000 });
    producer.close();
    await expect(init).rejects.toBeInstanceOf(ClientClosedError);
    const after = retries.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(retries.length).toBe(after);
  });

  it('pipelined sends land once each, keyed as kafkajs partitions, with the offsets it reports', async () => {
    const s = await setup(useTmpDir('own-producer-'));
    const bootstrap = `127.0.0.1:${s.proxy.port}`;
    const admin = kafka(bootstrap).admin();
    await admin.connect();
    onTestFinished(() => admin.disconnect());
    await admin.createTopics({ topics: [{ topic: 'own', numPartitions: 3 }] });
    const producer = await ownProducer(bootstrap);
    const acks = await pipelined(producer, 'own', 30);

    const records = await consumeAll(bootstrap, 'own');
    expect(records).toHaveLength(300);
    const partitioner = Partitioners.DefaultPartitioner();
    for (const r of records) {
      const expected = partitioner({
        topic: 'own',
        partitionMetadata: [0, 1, 2].map((p) => ({ partitionId: p, leader: 0 })),
        message: { key: r.key },
      } as never);
      expect(r.partition).toBe(expected);
    }
    // Every reported (partition, offset) holds exactly the record sent.
    const at = new Map(records.map((r) => [`${r.partition}/${r.offset}`, r.value]));
    for (const [n, round] of acks.entries()) {
      for (const [i, a] of round.entries()) {
        expect(at.get(`${a.partition}/${a.offset}`)).toBe(`r${n}-${i}`);
      }
    }
    // Per key, the order of sending.
    for (let k = 0; k < 7; k++) {
      const values = records.filter((r) => r.key === `key-${k}`).map((r) => r.value);
      const sent = Array.from({ length: 30 }, (_, round) =>
        Array.from({ length: 10 }, (_, i) => i)
          .filter((i) => i % 7 === k)
          .map((i) => `r${round}-${i}`),
      ).flat();
      expect(values).toEqual(sent);
    }
  });

  it('resends batches whose answers were lost, in order, without duplicates', async () => {
    const s = await setup(useTmpDir('own-producer-drop-'));
    for (const n of [2, 3, 9, 20]) s.dropAt.add(n);
    const bootstrap = `127.0.0.1:${s.proxy.port}`;
    const producer = await ownProducer(bootstrap);
    const acks = await pipelined(producer, 'own-drop', 40);
    expect(s.drops()).toBe(4);
    const records = await consumeAll(bootstrap, 'own-drop');
    expect(records.map((r) => r.value)).toEqual(
      Array.from({ length: 40 }, (_, round) =>
        Array.from({ length: 10 }, (_, i) => `r${round}-${i}`),
      ).flat(),
    );
    expect(acks.flat().map((a) => a.offset)).toEqual(records.map((r) => r.offset));
  });

  it('reuses batch buffers across sends of different sizes without mixing their bytes', async () => {
    // Answers lost on the way make some batches wait for a resend while later sends,
    // of other sizes, are encoded into the buffers freed meanwhile.
    const s = await setup(useTmpDir('own-producer-reuse-'));
    for (const n of [4, 11]) s.dropAt.add(n);
    const bootstrap = `127.0.0.1:${s.proxy.port}`;
    const producer = await ownProducer(bootstrap);
    const value = (round: number, i: number) =>
      `${round}:${i}:`.padEnd(
        round % 3 === 0 ? 150_000 : 40 + round,
        String.fromCharCode(97 + (round % 26)),
      );
    const sends = Array.from({ length: 24 }, (_, round) =>
      producer.send(
        Array.from({ length: round % 3 === 0 ? 2 : 12 }, (_, i) => ({
          topic: 'own-reuse',
          partition: 0,
          key: null,
          value: Buffer.from(value(round, i)),
          timestamp: null,
          headers: [],
        })),
      ),
    );
    await Promise.all(sends);
    expect(s.drops()).toBe(2);
    const records = await consumeAll(bootstrap, 'own-reuse');
    const expected = Array.from({ length: 24 }, (_, round) =>
      Array.from({ length: round % 3 === 0 ? 2 : 12 }, (_, i) => value(round, i)),
    ).flat();
    expect(records.length).toBe(expected.length);
    records.forEach((r, n) => {
      // Whole values compared, without printing 150 kB on a mismatch.
      expect(r.value === expected[n], `record ${n}`).toBe(true);
    });
  });

  it('keeps every record across a broker restart in the middle of pipelined sends', async () => {
    const s = await setup(useTmpDir('own-producer-restart-'));
    s.dropAt.add(5);
    s.setOnDrop(() => s.restart());
    const bootstrap = `127.0.0.1:${s.proxy.port}`;
    const producer = await ownProducer(bootstrap);
    await pipelined(producer, 'own-restart', 25);
    await s.settled();
    const records = await consumeAll(bootstrap, 'own-restart');
    expect(records.map((r) => r.value)).toEqual(
      Array.from({ length: 25 }, (_, round) =>
        Array.from({ length: 10 }, (_, i) => `r${round}-${i}`),
      ).flat(),
    );
  });

  it('fails a send the broker refuses, names the error, and refuses later sends', async () => {
    const s = await setup(useTmpDir('own-producer-large-'));
    const bootstrap = `127.0.0.1:${s.proxy.port}`;
    const admin = kafka(bootstrap).admin();
    await admin.connect();
    onTestFinished(() => admin.disconnect());
    await admin.createTopics({
      topics: [{ topic: 'small', configEntries: [{ name: 'max.message.bytes', value: '1000' }] }],
    });
    const producer = await ownProducer(bootstrap);
    const big = { topic: 'small', partition: null, key: null, timestamp: null, headers: [] };
    await expect(producer.send([{ ...big, value: Buffer.alloc(5000) }])).rejects.toThrow(
      /MESSAGE_TOO_LARGE|RECORD_LIST_TOO_LARGE/,
    );
    await expect(producer.send([{ ...big, value: Buffer.from('ok') }])).rejects.toThrow();
    const fresh = await ownProducer(bootstrap);
    await expect(fresh.send([{ ...big, partition: 4, value: Buffer.from('x') }])).rejects.toThrow(
      /partition 4 of topic small does not exist: the topic has 1 partitions/,
    );
  });
});

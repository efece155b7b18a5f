import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ApiKey } from '../../../src/protocol/api-keys.ts';
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

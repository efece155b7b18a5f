/**
 * Broker produce and consume throughput with kcat (librdkafka), kafkajs and
 * @platformatic/kafka, for 100-byte and 1 KiB records, next to two limits measured
 * in the same run: appending
 * the same bytes to a file from Node (what the log does underneath) and copying them
 * over a loopback TCP connection between two Node sockets (what the server does).
 *
 * The broker runs on its own worker thread (startBrokerThread), as in a worker
 * process; kcat runs as a child process; kafkajs runs on this thread. Each workload
 * produces into a fresh topic, then consumes it from the beginning (kafkajs as a
 * consumer group of one; @platformatic/kafka as a group of one reading from the
 * earliest offset, counted from its first record as kafkajs is).
 *
 * The topic's high watermark is checked after kcat's produce, and kcat -e consumes
 * up to it, so a fast number is never a short run.
 *
 * Run: LOG_LEVEL=warn node --import tsx bench/broker/throughput.ts [records100] [records1k]
 * Prints `name: value unit` lines.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Consumer, ProduceAcks, Producer } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { startBrokerThread } from '../../src/broker/broker-thread.ts';

const counts: Record<number, number> = {
  100: Number(process.argv[2] ?? 1_000_000),
  1024: Number(process.argv[3] ?? 200_000),
};

function line(name: string, value: number, unit: string): void {
  console.log(`${name}: ${value.toFixed(value >= 100 ? 0 : 2)} ${unit}`);
}

function report(name: string, records: number, bytes: number, ms: number): void {
  line(`${name}_records_per_s`, (records / ms) * 1000, 'records/s');
  line(`${name}_mb_per_s`, ((bytes / ms) * 1000) / 1e6, 'MB/s');
}

/** Runs a command to completion (its output discarded) and returns its wall time. */
function run(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.once('close', (code) =>
      code === 0
        ? resolve(performance.now() - start)
        : reject(new Error(`${cmd} exited ${code}: ${err}`)),
    );
  });
}

/** Appending `total` bytes in 1 MiB writes to a file: the storage limit. */
function fileAppendMs(dir: string, total: number): number {
  const chunk = Buffer.alloc(1 << 20, 'v');
  const fd = openSync(join(dir, 'raw.bin'), 'w');
  const start = performance.now();
  for (let written = 0; written < total; written += chunk.length) writeSync(fd, chunk);
  const ms = performance.now() - start;
  closeSync(fd);
  rmSync(join(dir, 'raw.bin'));
  return ms;
}

/** Copying `total` bytes over loopback TCP between two Node sockets: the network limit. */
function loopbackMs(total: number): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer((s) => {
      let received = 0;
      s.on('data', (d: Buffer) => {
        received += d.length;
        if (received >= total) {
          resolve(performance.now() - start);
          s.destroy();
          server.close();
        }
      });
    });
    let start = 0;
    server.listen(0, '127.0.0.1', () => {
      const client = connect((server.address() as { port: number }).port, '127.0.0.1', () => {
        start = performance.now();
        const chunk = Buffer.alloc(1 << 16, 'v');
        let sent = 0;
        const pump = () => {
          while (sent < total) {
            sent += chunk.length;
            if (!client.write(chunk)) return void client.once('drain', pump);
          }
          client.end();
        };
        pump();
      });
      client.on('error', () => {});
    });
  });
}

/**
 * @platformatic/kafka: `n` records in sends of 1000, up to 8 in flight (as kafkajs
 * above), acks=1; then a consumer group of one from the earliest offset.
 */
async function platformatic(
  bootstrap: string,
  topic: string,
  size: number,
  n: number,
  checkProduced: () => Promise<void>,
) {
  const options = { clientId: 'bench-platformatic', bootstrapBrokers: [bootstrap] };
  const producer = new Producer({ ...options, acks: ProduceAcks.LEADER });
  const value = Buffer.alloc(size, 'v');
  const messages = Array.from({ length: 1000 }, () => ({ topic, value }));
  const start = performance.now();
  try {
    const inFlight = new Set<Promise<unknown>>();
    for (let sent = 0; sent < n; sent += messages.length) {
      const batch = sent + messages.length <= n ? messages : messages.slice(0, n - sent);
      const p = producer.send({ messages: batch }).finally(() => inFlight.delete(p));
      inFlight.add(p);
      if (inFlight.size >= 8) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    report(`platformatic_produce_${size}b`, n, n * size, performance.now() - start);
  } finally {
    await producer.close();
  }
  await checkProduced();
  const consumer = new Consumer({ ...options, groupId: `bench-platformatic-${size}` });
  try {
    const stream = await consumer.consume({
      topics: [topic],
      mode: 'earliest',
      autocommit: false,
      maxBytes: 16 << 20,
      maxWaitTime: 50,
    });
    let consumed = 0;
    let consumeStart = 0;
    await new Promise<void>((resolve, reject) => {
      stream.on('error', reject);
      stream.on('data', () => {
        if (consumeStart === 0) consumeStart = performance.now();
        if (++consumed === n) resolve();
      });
    });
    report(
      `platformatic_consume_${size}b`,
      consumed,
      consumed * size,
      performance.now() - consumeStart,
    );
    await stream.close();
  } finally {
    await consumer.close(true);
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-broker-'));
  const broker = await startBrokerThread({
    host: '127.0.0.1',
    port: 0,
    dataDir: join(dir, 'data'),
    nodeId: 1,
    config: { 'log.cleaner.enable': false, 'group.initial.rebalance.delay.ms': 0 },
  });
  const bootstrap = `127.0.0.1:${broker.port}`;
  const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING, clientId: 'bench' });
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const size of [100, 1024]) {
      const n = counts[size]!;
      const bytes = n * size;
      report(`raw_file_append_${size}b`, n, bytes, fileAppendMs(dir, bytes));
      report(`raw_loopback_tcp_${size}b`, n, bytes, await loopbackMs(bytes));

      // kcat: one value per line, no keys (as `kcat -P` is commonly used).
      const input = join(dir, `input-${size}.txt`);
      const value = 'v'.repeat(size - 1);
      writeFileSync(input, `${value}\n`.repeat(n));
      const topic = `kcat-${size}`;
      const produceMs = await run('kcat', [
        '-b',
        bootstrap,
        '-P',
        '-t',
        topic,
        '-l',
        input,
        '-X',
        'linger.ms=5',
        '-X',
        'batch.num.messages=10000',
        '-X',
        'queue.buffering.max.messages=1000000',
      ]);
      report(`kcat_produce_${size}b`, n, bytes, produceMs);
      const highWatermark = (await admin.fetchTopicOffsets(topic))[0]!.high;
      if (highWatermark !== String(n))
        throw new Error(`kcat produced ${highWatermark} records of ${n}`);
      // -e: kcat exits only once it has read up to the high watermark.
      const consumeMs = await run('kcat', [
        '-b',
        bootstrap,
        '-C',
        '-t',
        topic,
        '-o',
        'beginning',
        '-e',
        '-q',
        '-f',
        '%s\n',
        '-X',
        'fetch.wait.max.ms=10',
      ]);
      report(`kcat_consume_${size}b`, n, bytes, consumeMs);
      rmSync(input);

      // kafkajs: batches of 1000, up to 8 requests in flight.
      const kn = Math.min(n, size === 100 ? 300_000 : 100_000);
      const producer = kafka.producer({ allowAutoTopicCreation: true });
      await producer.connect();
      const messages = Array.from({ length: 1000 }, () => ({ value: Buffer.alloc(size, 'v') }));
      const ktopic = `kafkajs-${size}`;
      await producer.send({ topic: ktopic, messages: messages.slice(0, 1) });
      const start = performance.now();
      const inFlight = new Set<Promise<unknown>>();
      for (let sent = 0; sent < kn; sent += messages.length) {
        const p = producer
          .send({ topic: ktopic, acks: 1, messages })
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        if (inFlight.size >= 8) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      report(`kafkajs_produce_${size}b`, kn, kn * size, performance.now() - start);
      await producer.disconnect();
      // kafkajs consumer group of one, from the beginning (the warm-up record included).
      const consumer = kafka.consumer({
        groupId: `bench-${size}`,
        maxBytes: 16 << 20,
        maxWaitTimeInMs: 50,
      });
      await consumer.connect();
      await consumer.subscribe({ topic: ktopic, fromBeginning: true });
      let consumed = 0;
      let consumeStart = 0;
      await new Promise<void>((resolve, reject) => {
        consumer
          .run({
            eachBatch: async ({ batch }) => {
              if (consumeStart === 0) consumeStart = performance.now();
              consumed += batch.messages.length;
              if (consumed >= kn + 1) resolve();
            },
          })
          .catch(reject);
      });
      // Timed from the first batch: group join and the initial offset lookup are not throughput.
      report(
        `kafkajs_consume_${size}b`,
        consumed,
        consumed * size,
        performance.now() - consumeStart,
      );
      await consumer.disconnect();

      const ptopic = `platformatic-${size}`;
      await admin.createTopics({ topics: [{ topic: ptopic }] });
      await platformatic(bootstrap, ptopic, size, n, async () => {
        const produced = (await admin.fetchTopicOffsets(ptopic))[0]!.high;
        if (produced !== String(n))
          throw new Error(`@platformatic/kafka produced ${produced} records of ${n}`);
      });
    }
  } finally {
    await admin.disconnect();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

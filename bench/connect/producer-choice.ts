/**
 * The source task's producer: kafkajs (idempotent, one request in flight, as the
 * runtime used it) next to our IdempotentProducer on the protocol client (five
 * requests in flight), sending the same CDC-sized records (a 40-byte key, a 1.4 KB JSON
 * value with an inline schema) to the embedded broker on its own thread, in requests
 * of up to 1 MB (max.request.size), the way WorkerSourceTask hands them over. Both
 * run on this thread; the figures are records acknowledged per second, and the CPU the
 * process (this thread and the broker's) spent per record.
 *
 * Run: LOG_LEVEL=warn npx tsx bench/connect/producer-choice.ts [records]
 * Prints `name: value unit` lines.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { startBrokerThread } from '../../src/broker/broker-thread.ts';
import { ClusterClient } from '../../src/protocol/client/cluster-client.ts';
import { IdempotentProducer, type ProducerRecord } from '../../src/protocol/client/producer.ts';

const RECORDS = Number(process.argv[2] ?? 300_000);
const REQUEST_BYTES = 1_048_576;

const schema = JSON.stringify({
  type: 'struct',
  fields: Array.from({ length: 12 }, (_, i) => ({
    type: 'int64',
    optional: i > 0,
    field: `column_${i}`,
  })),
  optional: false,
  name: 'bench.public.small.Envelope',
});

function record(i: number): ProducerRecord {
  return {
    topic: 'choice',
    partition: null,
    key: Buffer.from(`{"schema":null,"payload":{"id":${i}}}`),
    value: Buffer.from(`{"schema":${schema},"payload":{"id":${i},"v":${i},"t":"row ${i}"}}`),
    timestamp: null,
    headers: [],
  };
}

/** The records cut into requests of up to REQUEST_BYTES. */
function requests(topic: string): ProducerRecord[][] {
  const out: ProducerRecord[][] = [];
  let current: ProducerRecord[] = [];
  let bytes = 0;
  for (let i = 0; i < RECORDS; i++) {
    const r = { ...record(i), topic };
    const size = r.key!.length + r.value!.length + 64;
    if (current.length > 0 && bytes + size > REQUEST_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(r);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

function report(name: string, ms: number, cpuMicros: number): void {
  console.log(`producer_choice.${name}: ${Math.round((RECORDS / ms) * 1000)} records/s`);
  console.log(`producer_choice.${name}_cpu_per_record: ${(cpuMicros / RECORDS).toFixed(2)} us`);
}

async function measure(run: () => Promise<void>): Promise<[number, number]> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  return [performance.now() - start, used.user + used.system];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-producer-'));
  const broker = await startBrokerThread({
    host: '127.0.0.1',
    port: 0,
    dataDir: join(dir, 'data'),
    nodeId: 1,
    config: { 'log.cleaner.enable': false },
  });
  const bootstrap = `127.0.0.1:${broker.port}`;
  try {
    const kafka = new Kafka({
      brokers: [bootstrap],
      logLevel: logLevel.NOTHING,
      clientId: 'bench',
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'kafkajs' }, { topic: 'own' }] });
    await admin.disconnect();

    const kafkajsRequests = requests('kafkajs');
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await producer.connect();
    const [kMs, kCpu] = await measure(async () => {
      for (const batch of kafkajsRequests) {
        await producer.sendBatch({
          acks: -1,
          topicMessages: [
            {
              topic: 'kafkajs',
              messages: batch.map((r) => ({ key: r.key, value: r.value })),
            },
          ],
        });
      }
    });
    await producer.disconnect();
    report('kafkajs_1_in_flight', kMs, kCpu);

    const ownRequests = requests('own');
    const own = new IdempotentProducer(new ClusterClient(bootstrap, { clientId: 'bench' }));
    await own.init();
    const [oMs, oCpu] = await measure(async () => {
      await Promise.all(ownRequests.map((batch) => own.send(batch)));
    });
    own.close();
    report('own_5_in_flight', oMs, oCpu);
    console.log(`producer_choice.own_vs_kafkajs: ${(kMs / oMs).toFixed(2)} x`);
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

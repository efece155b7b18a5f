/**
 * The Parquet sink through the real runtime, as a user runs it: `connect standalone
 * worker.properties sink.json` as a child process with the embedded broker
 * (bootstrap.servers empty, broker.port=0: the port is read back from the
 * `broker listening on` line), JsonConverter with schemas, the REST API on a free port.
 * Records are produced with kafkajs. Objects are read as a user sees them: local files
 * directly, S3 objects with ListObjectsV2/GetObject (then copied to a folder so DuckDB
 * reads them with their Hive partition columns). "Done" is the sink's consumer group
 * having committed the expected offsets: the sink commits only what is in durable files.
 *
 * Each started process is stopped when the test ends (pass or fail); kill() is the
 * crash path (SIGKILL, nothing flushed). The broker's data folder survives a kill, so
 * a restart on the same folder sees every record produced before it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { Kafka, logLevel, type Message } from 'kafkajs';
import { onTestFinished } from 'vitest';
import { spawnConnect, type TestProcess } from '../../helpers/processes.ts';
import { waitFor } from '../../helpers/wait.ts';

export const parquetPluginPath = fileURLToPath(
  new URL('../../../connectors/parquet-sink', import.meta.url),
);

export interface Pipeline {
  process: TestProcess;
  bootstrap: string;
  restUrl: string;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (clean stop), resolved with the exit code. */
  stop(): Promise<number | null>;
}

export interface PipelineOptions {
  dir: string;
  connector: { name: string; config: Record<string, string> };
  /** Worker keys over the defaults below. */
  worker?: Record<string, string>;
  /** Partitions of auto-created topics (the sink's topics). */
  partitions?: number;
  /** Environment of the child (e.g. AWS credentials). */
  env?: Record<string, string | undefined>;
}

/** Writes worker.properties and the connector file under `dir` and starts the worker. */
export async function startPipeline(o: PipelineOptions): Promise<Pipeline> {
  const properties = join(o.dir, 'worker.properties');
  const worker: Record<string, string> = {
    'bootstrap.servers': '',
    'broker.host': '127.0.0.1',
    'broker.port': '0',
    'broker.data.dir': join(o.dir, 'broker'),
    'offsets.topic.num.partitions': '4',
    'group.initial.rebalance.delay.ms': '0',
    // The sink's subscription auto-creates its topics, usually before the test
    // produces: with this many partitions.
    'num.partitions': String(o.partitions ?? 1),
    listeners: 'http://127.0.0.1:0',
    'plugin.path': parquetPluginPath,
    'offset.storage.file.filename': join(o.dir, 'connect.offsets'),
    // Sink offsets are committed at least this often (scheduled rotation runs from the
    // runtime's put([]) on idle tasks).
    'offset.flush.interval.ms': '200',
    'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'key.converter.schemas.enable': 'true',
    'value.converter.schemas.enable': 'true',
    'task.shutdown.graceful.timeout.ms': '20000',
    ...o.worker,
  };
  writeFileSync(
    properties,
    `${Object.entries(worker)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n')}\n`,
  );
  const connectorFile = join(o.dir, `${o.connector.name}.json`);
  writeFileSync(connectorFile, JSON.stringify(o.connector));
  const child = spawnConnect(['standalone', properties, connectorFile], {
    killGraceMs: 20_000,
    env: { LOG_LEVEL: 'warn', ...o.env },
  });
  onTestFinished(async () => {
    await child.stop();
  });
  const brokerLine = await child.waitForLine(/broker listening on [^:\s]+:\d+/, 60_000);
  const port = Number(/broker listening on [^:\s]+:(\d+)/.exec(brokerLine)?.[1]);
  const runningLine = await child.waitForLine(/REST API on http:\/\/127\.0\.0\.1:\d+/, 60_000);
  const restUrl = /REST API on (http:\/\/127\.0\.0\.1:\d+)/.exec(runningLine)?.[1] as string;
  return {
    process: child,
    bootstrap: `127.0.0.1:${port}`,
    restUrl,
    async kill() {
      child.signal('SIGKILL');
      await child.exited;
    },
    async stop() {
      return (await child.stop()).code;
    },
  };
}

/** Produce JSON values (already in the converter's wire form) to a topic, acks=all. */
export async function produce(
  bootstrap: string,
  topic: string,
  messages: Array<{ key?: unknown; value: unknown; partition?: number; timestamp?: number }>,
  partitions = 1,
): Promise<void> {
  const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING, clientId: 'test' });
  const admin = kafka.admin();
  const producer = kafka.producer();
  try {
    await admin.connect();
    const existing = await admin.listTopics();
    if (!existing.includes(topic)) {
      await admin.createTopics({
        topics: [{ topic, numPartitions: partitions }],
        waitForLeaders: true,
      });
    }
    await producer.connect();
    // Batches under the broker's 1 MB message.max.bytes.
    let batch: Message[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length > 0) await producer.send({ topic, acks: -1, messages: batch });
      batch = [];
      bytes = 0;
    };
    for (const m of messages) {
      const message: Message = {
        key: m.key === undefined ? null : JSON.stringify(m.key),
        value: m.value === null ? null : JSON.stringify(m.value),
        ...(m.partition !== undefined ? { partition: m.partition } : {}),
        ...(m.timestamp !== undefined ? { timestamp: String(m.timestamp) } : {}),
      };
      const size = (message.value?.length ?? 0) + (message.key?.length ?? 0);
      if (bytes + size > 512 * 1024) await flush();
      batch.push(message);
      bytes += size;
    }
    await flush();
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}

/** The committed offsets of the sink's consumer group (connect-<name>), per partition. */
export async function committedOffsets(
  bootstrap: string,
  connector: string,
  topic: string,
): Promise<number[]> {
  const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING, clientId: 'test' });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const [result] = await admin.fetchOffsets({ groupId: `connect-${connector}`, topics: [topic] });
    return (result?.partitions ?? [])
      .sort((a, b) => a.partition - b.partition)
      .map((p) => Number(p.offset));
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Resolves when the sink's group has committed `expected` (one offset per partition,
 * in partition order): the records before them are in durable files. On timeout the
 * error shows the last offsets seen and the worker's output.
 */
export async function waitForCommitted(
  p: Pipeline,
  name: string,
  topic: string,
  expected: number[],
  timeoutMs = 30_000,
): Promise<void> {
  let last: number[] = [];
  try {
    await waitFor(
      `offsets ${expected.join(',')} committed by ${name}`,
      async () => {
        last = await committedOffsets(p.bootstrap, name, topic);
        return last.join(',') === expected.join(',') ? true : undefined;
      },
      timeoutMs,
    );
  } catch (e) {
    throw new Error(
      `${(e as Error).message}; last committed ${last.join(',')}; worker output:\n${p.process.output().slice(-30).join('\n')}`,
    );
  }
}

export async function connectorStatus(
  restUrl: string,
  name: string,
): Promise<{
  connector: { state: string };
  tasks: Array<{ id: number; state: string; trace?: string }>;
}> {
  const response = await fetch(`${restUrl}/connectors/${name}/status`);
  if (!response.ok) throw new Error(`status of ${name}: HTTP ${response.status}`);
  return (await response.json()) as never;
}

/** Every file under `root`, as relative paths, sorted. */
export function listFiles(root: string): string[] {
  if (!existsSync(root)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(root, p));
    }
  };
  walk(root);
  return out.sort();
}

/** Parquet objects of a local store folder: key -> bytes. */
export function localObjects(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const f of listFiles(root))
    if (f.endsWith('.parquet')) out.set(f, readFileSync(join(root, f)));
  return out;
}

/** Parquet objects of an S3 bucket as a client sees them: key -> bytes. */
export async function s3Objects(client: S3Client, bucket: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) {
      const key = o.Key as string;
      if (!key.endsWith('.parquet')) continue;
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      out.set(
        key,
        Buffer.from(
          await (
            got.Body as { transformToByteArray(): Promise<Uint8Array> }
          ).transformToByteArray(),
        ),
      );
    }
    token = page.NextContinuationToken;
  } while (token);
  return out;
}

/** Copy objects into a folder as plain files, so DuckDB reads them with Hive partitions. */
export function materialize(objects: Map<string, Buffer>, into: string): string {
  for (const [key, bytes] of objects) {
    const path = join(into, key);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, bytes);
  }
  return into;
}

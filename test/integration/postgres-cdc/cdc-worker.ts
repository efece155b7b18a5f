/**
 * End-to-end harness for the Postgres CDC source: `connect standalone` as a child
 * process (the command users run) with the embedded broker in the same process
 * (bootstrap.servers empty) and only the postgres-cdc plugin on plugin.path, plus
 * kafkajs readers for the topics it writes and REST calls.
 *
 * Every worker, consumer and admin client started here is stopped when the current
 * test ends (onTestFinished), pass or fail. A restarted worker reuses the folder given
 * (broker data and offsets file), so it sees what its predecessor left, as after a
 * real crash; the broker port is read from the process output each time.
 */
export { rest } from '../../helpers/rest-client.ts';
export { waitFor } from '../../helpers/wait.ts';

import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import type pg from 'pg';
import { onTestFailed, onTestFinished } from 'vitest';
import type { PostgresCluster } from '../../helpers/postgres.ts';
import { type TestProcess, useConnect } from '../../helpers/processes.ts';

export const cdcPluginPath = fileURLToPath(
  new URL('../../../connectors/postgres-cdc', import.meta.url),
);

export interface CdcWorker {
  process: TestProcess;
  restUrl: string;
  bootstrap: string;
}

export interface CdcWorkerOptions {
  /** Worker keys over the defaults below. */
  worker?: Record<string, string>;
  /** Extra arguments before `standalone` (node flags go through NODE_OPTIONS instead). */
  env?: Record<string, string>;
  /** Pass no connector file: the test creates connectors over REST. */
  noConnector?: boolean;
}

/** The connector config tests start from; `database` names the test's database. */
export function cdcConnectorConfig(
  pg: { host: string; port: number; user: string; password: string },
  database: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    'tasks.max': '1',
    'database.hostname': pg.host,
    'database.port': String(pg.port),
    'database.user': pg.user,
    'database.password': pg.password,
    'database.dbname': database,
    'topic.prefix': 'PostgreSQL_server',
    'plugin.name': 'pgoutput',
    'slot.name': database,
    'publication.name': database,
    'publication.autocreate.mode': 'filtered',
    'snapshot.mode': 'initial',
    'topic.creation.default.replication.factor': '-1',
    'topic.creation.default.partitions': '1',
    ...extra,
  };
}

/** Start `connect standalone` with a CDC connector named `name` (unless noConnector). */
export async function startCdcWorker(
  dir: string,
  name: string,
  connector: Record<string, string>,
  options: CdcWorkerOptions = {},
): Promise<CdcWorker> {
  const properties = join(dir, 'worker.properties');
  const worker: Record<string, string> = {
    'bootstrap.servers': '',
    'broker.host': '127.0.0.1',
    'broker.port': '0',
    'broker.data.dir': join(dir, 'broker'),
    'offsets.topic.num.partitions': '1',
    'group.initial.rebalance.delay.ms': '0',
    // Compaction tests wait for the cleaner; a second between checks keeps them short.
    'log.cleaner.backoff.ms': '500',
    listeners: 'http://127.0.0.1:0',
    'plugin.path': cdcPluginPath,
    'offset.storage.file.filename': join(dir, 'connect.offsets'),
    'offset.flush.interval.ms': '500',
    'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
    'task.shutdown.graceful.timeout.ms': '10000',
    ...options.worker,
  };
  writeFileSync(
    properties,
    `${Object.entries(worker)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n')}\n`,
  );
  const args = ['standalone', properties];
  if (!options.noConnector) {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ name, config: connector }));
    args.push(file);
  }
  const p = useConnect(args, { killGraceMs: 20_000, env: options.env });
  // The worker's own account is what explains a failed end-to-end test.
  onTestFailed(() => {
    console.error(`--- ${p.description} ---\n${p.output().slice(-60).join('\n')}`);
  });
  const brokerLine = await p.waitForLine(/broker listening on [\d.]+:\d+/, 60_000);
  const bootstrap = /broker listening on ([\d.]+:\d+)/.exec(brokerLine)![1];
  const restLine = await p.waitForLine(/REST API on http:\/\/[\d.]+:\d+/, 60_000);
  const restUrl = /REST API on (http:\/\/[\d.]+:\d+)/.exec(restLine)![1];
  return { process: p, restUrl, bootstrap };
}

export interface TopicRecord {
  offset: number;
  key: string | null;
  value: string | null;
}

function kafka(bootstrap: string): Kafka {
  return new Kafka({
    clientId: 'cdc-e2e',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 3 },
  });
}

/** An admin client for the current test (disconnected at its end). */
export async function useAdmin(bootstrap: string): Promise<Admin> {
  const admin = kafka(bootstrap).admin();
  await admin.connect();
  onTestFinished(() => admin.disconnect());
  return admin;
}

/** The high watermark of partition 0, or undefined while the topic does not exist. */
export async function endOffset(admin: Admin, topic: string): Promise<number | undefined> {
  const topics = await admin.listTopics();
  if (!topics.includes(topic)) return undefined;
  const offsets = await admin.fetchTopicOffsets(topic);
  return Number(offsets.find((o) => o.partition === 0)?.high ?? 0);
}

/**
 * Every record of partition 0 from the log start up to the current high watermark,
 * read with a kafkajs consumer (its own group, so nothing is shared between reads).
 */
export async function readTopic(bootstrap: string, topic: string): Promise<TopicRecord[]> {
  const client = kafka(bootstrap);
  const admin = client.admin();
  await admin.connect();
  let high: number;
  try {
    high = Number((await admin.fetchTopicOffsets(topic)).find((o) => o.partition === 0)!.high);
  } finally {
    await admin.disconnect();
  }
  const records: TopicRecord[] = [];
  if (high === 0) return records;
  const consumer = client.consumer({
    groupId: `cdc-e2e-${topic}-${Date.now()}-${Math.random()}`,
    maxWaitTimeInMs: 200,
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`read ${records.length} records of ${topic}, expected up to ${high}`)),
        60_000,
      );
      consumer
        .run({
          eachBatchAutoResolve: true,
          eachBatch: async ({ batch }) => {
            for (const m of batch.messages) {
              const offset = Number(m.offset);
              if (offset >= high) continue;
              records.push({
                offset,
                key: m.key === null ? null : m.key.toString('utf8'),
                value: m.value === null ? null : m.value.toString('utf8'),
              });
            }
            const last = Number(batch.lastOffset());
            if (last >= high - 1) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/**
 * Every record of partition 0 read with kcat (librdkafka) from the beginning to the end.
 * Used after compaction: the cleaner keeps a record-less batch where it holds a
 * producer's last sequence (as Kafka does), and kafkajs 2.2.4 re-fetches such a batch
 * forever instead of stepping over it; librdkafka steps over it.
 */
export async function readTopicWithKcat(bootstrap: string, topic: string): Promise<TopicRecord[]> {
  const { stdout } = await promisify(execFile)(
    'kcat',
    [
      '-b',
      bootstrap,
      '-C',
      '-t',
      topic,
      '-p',
      '0',
      '-o',
      'beginning',
      '-e',
      '-q',
      '-Z',
      '-f',
      '%o\t%k\t%s\n',
    ],
    { timeout: 30_000, maxBuffer: 256 * 1024 * 1024 },
  ).catch((e: Error & { code?: string }) => {
    if (e.code === 'ENOENT')
      throw new Error('kcat is not installed (Debian: apt-get install kcat)');
    throw e;
  });
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [offset, key, value] = l.split('\t');
      return {
        offset: Number(offset),
        key: key === 'NULL' ? null : key,
        value: value === 'NULL' ? null : value,
      };
    });
}

/**
 * A fresh database of `cluster` with `ddl` applied (if any) and a client on it, closed
 * when the current test ends.
 */
export async function useDatabase(
  cluster: PostgresCluster,
  prefix: string,
  ddl?: string,
): Promise<{ db: string; sql: pg.Client }> {
  const db = await cluster.freshDatabase(prefix);
  const sql = await cluster.client(db);
  sql.on('error', () => undefined);
  onTestFinished(() => sql.end().catch(() => undefined));
  if (ddl !== undefined) await sql.query(ddl);
  return { db, sql };
}

/**
 * The demo's two connectors, created through the worker's REST API as a user would:
 * `shop-cdc` (Postgres CDC, Debezium's keys, a snapshot then the WAL) and `shop-lake`
 * (the Parquet sink with Debezium's `unwrap`, ExtractNewRecordState, writing deletes as
 * rows with `__deleted = true`, into `<demo.dir>/lake`).
 *
 * Idempotent: a connector whose stored config equals the demo's is left alone (a
 * second run resumes it from its offsets); one that differs, e.g. because
 * demo.postgres.port changed, gets the demo's config with PUT, which Kafka Connect
 * treats as an update.
 *
 * The sink names its topics rather than a regex, and is created once the source has
 * produced to both: a subscription made before a topic exists would not see it.
 */
import type { DemoPostgres } from './demo-postgres.ts';
import { DEMO_DATABASE } from './demo-postgres.ts';
import { SHOP_TABLES } from './shop-schema.ts';

export const SOURCE_NAME = 'shop-cdc';
export const SINK_NAME = 'shop-lake';
export const TOPIC_PREFIX = 'shop';
export const topicOf = (table: string) => `${TOPIC_PREFIX}.public.${table}`;
const TOPICS_TIMEOUT_MS = 60_000;

export function sourceConfig(postgres: DemoPostgres): Record<string, string> {
  return {
    'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    'tasks.max': '1',
    'database.hostname': postgres.host,
    'database.port': String(postgres.port),
    'database.user': postgres.user,
    'database.password': postgres.password,
    'database.dbname': DEMO_DATABASE,
    'topic.prefix': TOPIC_PREFIX,
    'plugin.name': 'pgoutput',
    'slot.name': 'connect_demo',
    'publication.name': 'connect_demo',
    'publication.autocreate.mode': 'filtered',
    'table.include.list': SHOP_TABLES.map((t) => `public.${t}`).join(','),
    'snapshot.mode': 'initial',
    'topic.creation.default.replication.factor': '-1',
    'topic.creation.default.partitions': '1',
  };
}

export function sinkConfig(lakeDir: string, flushIntervalMs: number): Record<string, string> {
  return {
    'connector.class': 'io.confluent.connect.s3.S3SinkConnector',
    'tasks.max': '1',
    topics: SHOP_TABLES.map(topicOf).join(','),
    'store.url': `file://${lakeDir}`,
    'topics.dir': 'topics',
    'format.class': 'io.confluent.connect.s3.format.parquet.ParquetFormat',
    'parquet.codec': 'snappy',
    // Files close on the schedule below; at the demo's rates they stay small, and below
    // 10000 rows the sink does not start an encoder thread ahead for large files.
    'flush.size': '1000',
    // Wall-clock rotation: an open file is closed this often even when traffic is slow.
    'rotate.schedule.interval.ms': String(flushIntervalMs),
    transforms: 'unwrap',
    'transforms.unwrap.type': 'io.debezium.transforms.ExtractNewRecordState',
    'transforms.unwrap.delete.handling.mode': 'rewrite',
  };
}

export type ConnectorOutcome = 'created' | 'unchanged' | 'updated';

/** Creates or updates `name` to `config` unless it already has exactly that config. */
export async function ensureConnector(
  restUrl: string,
  name: string,
  config: Record<string, string>,
): Promise<ConnectorOutcome> {
  const path = `${restUrl}/connectors/${encodeURIComponent(name)}/config`;
  const current = await fetch(path);
  if (current.status === 200) {
    const stored = (await current.json()) as Record<string, string>;
    const { name: _, ...rest } = stored;
    if (sameConfig(rest, config)) return 'unchanged';
  } else if (current.status !== 404) {
    throw new Error(`GET ${path} answered ${current.status}: ${await current.text()}`);
  }
  const put = await fetch(path, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...config, name }),
  });
  if (put.status !== 200 && put.status !== 201) {
    throw new Error(`connector ${name} was refused (${put.status}): ${await put.text()}`);
  }
  return put.status === 201 ? 'created' : 'updated';
}

/** Waits until the source connector has produced to every table's topic. */
export async function waitForSourceTopics(restUrl: string, signal?: AbortSignal): Promise<void> {
  const wanted = SHOP_TABLES.map(topicOf);
  const deadline = Date.now() + TOPICS_TIMEOUT_MS;
  let last = '';
  while (!signal?.aborted) {
    const response = await fetch(`${restUrl}/connectors/${SOURCE_NAME}/topics`);
    if (response.status === 200) {
      const body = (await response.json()) as Record<string, { topics: string[] }>;
      const topics = body[SOURCE_NAME]?.topics ?? [];
      if (wanted.every((t) => topics.includes(t))) return;
      last = `it has produced to ${topics.length === 0 ? 'no topic' : topics.join(', ')}`;
    }
    const status = await fetch(`${restUrl}/connectors/${SOURCE_NAME}/status`);
    if (status.status === 200) {
      const s = (await status.json()) as { tasks?: Array<{ state: string; trace?: string }> };
      const failed = s.tasks?.find((t) => t.state === 'FAILED');
      if (failed) throw new Error(`connector ${SOURCE_NAME} failed: ${failed.trace ?? ''}`);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `connector ${SOURCE_NAME} did not produce to ${wanted.join(', ')} within ${TOPICS_TIMEOUT_MS / 1000} s (${last})`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function sameConfig(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (String(a[key]) !== String(b[key])) return false;
  return true;
}

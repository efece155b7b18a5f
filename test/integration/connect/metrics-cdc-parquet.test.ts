/**
 * GET /metrics after a CDC -> Parquet run: `connect standalone` (embedded broker in the
 * same process) snapshots a table of a private Postgres, streams two transactions after
 * it, and a Parquet sink writes every row to a folder. The worker's /metrics, read by a
 * strict Prometheus text parser, shows Debezium's snapshot and streaming metrics (names
 * and labels as the Debezium JMX exporter rules give them), the source and sink task
 * counts equal to the rows sent, the sink's consumer lag per partition, the Parquet
 * sink's files and bytes, and the broker's purgatory times.
 */

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { metricName, RECORDS_LAG } from '../../../src/connect/metrics/connect-metrics.ts';
import { usePostgres } from '../../helpers/postgres.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import {
  type ParsedFamily,
  parsePrometheusText,
  sampleOf,
} from '../../unit/metrics/prometheus-text.ts';
import {
  cdcConnectorConfig,
  cdcPluginPath,
  rest,
  startCdcWorker,
  useDatabase,
  waitFor,
} from '../postgres-cdc/cdc-worker.ts';

const cluster = usePostgres();
const parquetPluginPath = fileURLToPath(
  new URL('../../../connectors/parquet-sink', import.meta.url),
);

const SNAPSHOT_ROWS = 200;
const STREAMED_ROWS = 100;
const ROWS = SNAPSHOT_ROWS + STREAMED_ROWS;
/** Parquet files hold flush.size rows; ROWS is a multiple, so every row lands in a closed file. */
const FLUSH_SIZE = 50;
const TOPIC = 'PostgreSQL_server.public.orders';

const DDL = `CREATE TABLE orders (id int PRIMARY KEY, amount numeric(10, 2) NOT NULL);
  CREATE TABLE notes (id int PRIMARY KEY, body text);
  INSERT INTO orders SELECT i, i * 1.5 FROM generate_series(1, ${SNAPSHOT_ROWS}) i`;

async function scrape(url: string): Promise<Map<string, ParsedFamily>> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return parsePrometheusText(await response.text());
}

describe('GET /metrics after a CDC -> Parquet run', () => {
  it("shows Debezium's metrics, the tasks' counts equal to the rows sent, lag and files written", async () => {
    const { db, sql } = await useDatabase(cluster(), 'metricslake', DDL);
    const dir = useTmpDir();
    const lake = join(dir, 'lake');
    const worker = await startCdcWorker(
      dir,
      'pg',
      cdcConnectorConfig(cluster(), db, { 'table.include.list': 'public.orders,public.notes' }),
      { worker: { 'plugin.path': `${cdcPluginPath},${parquetPluginPath}` } },
    );
    const created = await rest(worker, 'PUT', '/connectors/lake/config', {
      name: 'lake',
      'connector.class': 'io.confluent.connect.s3.S3SinkConnector',
      topics: TOPIC,
      'store.url': `file://${lake}`,
      'flush.size': String(FLUSH_SIZE),
      transforms: 'unwrap',
      'transforms.unwrap.type': 'io.debezium.transforms.ExtractNewRecordState',
    });
    expect(created.status).toBe(201);
    const url = `${worker.restUrl}/metrics`;
    const cdc = { connector: 'pg', task: '0', plugin: 'postgres', name: 'PostgreSQL_server' };
    const snapshot = { ...cdc, context: 'snapshot' };
    const streaming = { ...cdc, context: 'streaming' };
    const dbz = (f: Map<string, ParsedFamily>, attr: string, labels: Record<string, string>) =>
      sampleOf(f, `debezium_metrics_${attr}`, labels);

    await waitFor('the snapshot completed and the stream connected', async () => {
      // Throws (retried) until the task registered its series.
      const f = await scrape(url);
      return dbz(f, 'snapshotcompleted', snapshot) === 1 && dbz(f, 'connected', streaming) === 1
        ? true
        : undefined;
    });
    // Two transactions after the snapshot; the last one's id is the info series' label.
    await sql.query(
      `INSERT INTO orders SELECT i, i FROM generate_series(${SNAPSHOT_ROWS + 1}, ${SNAPSHOT_ROWS + STREAMED_ROWS / 2}) i`,
    );
    await sql.query('BEGIN');
    await sql.query(
      `INSERT INTO orders SELECT i, i FROM generate_series(${SNAPSHOT_ROWS + STREAMED_ROWS / 2 + 1}, ${ROWS}) i`,
    );
    const xid = String(
      (await sql.query('SELECT txid_current() % 4294967296 AS x')).rows[0].x as string,
    );
    await sql.query('COMMIT');

    const sink = { connector: 'lake', task: '0' };
    const lagLabels = { ...sink, topic: TOPIC, partition: '0' };
    const f = await waitFor(
      'every row in a Parquet file, its offsets committed and the lag at 0',
      async () => {
        const f = await scrape(url);
        return sampleOf(f, 'parquet_sink_files_written_total', sink) === ROWS / FLUSH_SIZE &&
          sampleOf(f, RECORDS_LAG, lagLabels) === 0 &&
          sampleOf(f, metricName('sink-task-metrics', 'sink-record-active-count'), sink) === 0
          ? f
          : undefined;
      },
      30_000,
    );

    // Debezium's snapshot metrics.
    expect(dbz(f, 'snapshotrunning', snapshot)).toBe(0);
    expect(dbz(f, 'snapshotaborted', snapshot)).toBe(0);
    expect(dbz(f, 'totaltablecount', snapshot)).toBe(2);
    expect(dbz(f, 'remainingtablecount', snapshot)).toBe(0);
    expect(dbz(f, 'rowsscanned', { ...snapshot, table: 'public.orders' })).toBe(SNAPSHOT_ROWS);
    expect(dbz(f, 'rowsscanned', { ...snapshot, table: 'public.notes' })).toBe(0);
    expect(dbz(f, 'snapshotdurationinseconds', snapshot)).toBeGreaterThan(0);
    // Its streaming metrics.
    expect(dbz(f, 'totalnumberofeventsseen', streaming)).toBe(STREAMED_ROWS);
    expect(dbz(f, 'numberofeventsfiltered', streaming)).toBe(0);
    expect(dbz(f, 'millisecondsbehindsource', streaming)).toBeGreaterThanOrEqual(0);
    expect(dbz(f, 'lasttransactionid_info', { ...streaming, last_transaction_id: xid })).toBe(1);
    expect(dbz(f, 'replicationslotlagbytes', streaming)).toBeGreaterThanOrEqual(0);

    // The runtime's counts equal the rows sent, at both ends.
    const source = { connector: 'pg', task: '0' };
    const m = (group: string, attr: string, labels: Record<string, string>) =>
      sampleOf(f, metricName(group, attr), labels);
    expect(m('source-task-metrics', 'source-record-poll-total', source)).toBe(ROWS);
    expect(m('source-task-metrics', 'source-record-write-total', source)).toBe(ROWS);
    expect(m('sink-task-metrics', 'sink-record-read-total', sink)).toBe(ROWS);
    expect(m('sink-task-metrics', 'sink-record-send-total', sink)).toBe(ROWS);
    expect(m('sink-task-metrics', 'partition-count', sink)).toBe(1);
    expect(f.get(RECORDS_LAG)!.samples[0]!.labels.client_id).toBe('connector-consumer-lake-0');

    // The Parquet sink's own.
    expect(sampleOf(f, 'parquet_sink_bytes_written_total', sink)).toBeGreaterThan(0);
    expect(sampleOf(f, 'parquet_sink_open_partitions', sink)).toBe(0);
    expect(sampleOf(f, 'parquet_sink_buffered_bytes', sink)).toBe(0);

    // The embedded broker's, beside them.
    expect(sampleOf(f, 'kafka_server_brokertopicmetrics_messagesin_total', { topic: TOPIC })).toBe(
      ROWS,
    );
    const remote = 'kafka_network_requestmetrics_remotetimems';
    for (const request of ['Produce', 'Fetch'])
      expect(sampleOf(f, remote, { request }, `${remote}_count`)).toBeGreaterThan(0);
    expect(
      sampleOf(f, 'kafka_server_delayedoperationpurgatory_purgatorysize', {
        delayedoperation: 'Fetch',
      }),
    ).toBeGreaterThanOrEqual(0);
  });
});

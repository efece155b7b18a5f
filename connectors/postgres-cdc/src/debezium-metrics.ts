/**
 * Debezium's snapshot and streaming metrics for the Postgres connector, named as the
 * Debezium JMX exporter rules name them: the MBean
 * `debezium.postgres:type=connector-metrics,context=<snapshot|streaming>,server=<topic.prefix>`
 * attribute `<Attr>` becomes `debezium_metrics_<attr>` (lowercased, as the rules'
 * `lowercaseOutputName: true` makes it) with labels `plugin="postgres"`,
 * `name=<topic.prefix>` and `context`; RowsScanned adds `table` (schema.table), its
 * map key. The runtime adds `connector` and `task`.
 *
 *   snapshot   snapshotrunning, snapshotcompleted, snapshotaborted (1 or 0),
 *              rowsscanned{table}, totaltablecount, remainingtablecount,
 *              snapshotdurationinseconds
 *   streaming  millisecondsbehindsource (-1 before any transaction), connected (1/0),
 *              totalnumberofeventsseen, numberofeventsfiltered,
 *              lasttransactionid_info{last_transaction_id} (Debezium's LastTransactionId
 *              is a string attribute, which the exporter drops: an info series here),
 *              replicationslotlagbytes (ours, no Debezium attribute: WAL beyond the
 *              slot's confirmed position)
 *
 * Cost: the stream bumps two integer fields per change message (StreamingEventCounts)
 * and the task writes a few fields per transaction and per snapshot chunk; everything
 * is turned into samples when metrics are scraped. The slot lag is what the task
 * already knows (postgres-cdc-task.ts metrics(): the stream's own view of the server's
 * WAL end while streaming, Postgres' pg_replication_slots answer at the last retry
 * otherwise), so no query runs per scrape or per event.
 */
import type { PluginMetrics } from '../../../src/connect/api/index.ts';

/** What the change event source counts, per change message (insert, update, delete, truncate). */
export class StreamingEventCounts {
  /** Change messages the stream received (Debezium's TotalNumberOfEventsSeen). */
  seen = 0;
  /** Of those, dropped by the table filters or skipped.operations (NumberOfEventsFiltered). */
  filtered = 0;
}

/** Snapshot state over the task's life (one snapshot per task start at most). */
export class SnapshotMeter {
  running = false;
  completed = false;
  aborted = false;
  totalTables = 0;
  tablesDone = 0;
  private startedAt: number | null = null;
  private endedAt: number | null = null;

  started(tables: number, now: number): void {
    this.running = true;
    this.totalTables = tables;
    this.startedAt = now;
  }

  tableDone(): void {
    this.tablesDone++;
  }

  ended(completed: boolean, now: number): void {
    if (!this.running) return;
    this.running = false;
    this.completed = completed;
    this.aborted = !completed;
    this.endedAt = now;
  }

  durationSeconds(now: number): number {
    if (this.startedAt === null) return 0;
    return ((this.endedAt ?? now) - this.startedAt) / 1000;
  }
}

/** Per transaction the stream completed. */
export class StreamingMeter {
  readonly events = new StreamingEventCounts();
  /** -1 before the first transaction, as Debezium reports it. */
  behindSourceMs = -1;
  lastTransactionId: number | null = null;

  transactionCommitted(xid: number, commitTimeMicros: number, now: number): void {
    this.lastTransactionId = xid;
    if (commitTimeMicros > 0) this.behindSourceMs = Math.max(0, now - commitTimeMicros / 1000);
  }
}

/** What the task shows the metrics at scrape time. */
export interface DebeziumMetricsSource {
  topicPrefix: string;
  snapshot: SnapshotMeter;
  streaming: StreamingMeter;
  connected(): boolean;
  slotLagBytes(): number;
  now(): number;
}

const name = (attr: string) => `debezium_metrics_${attr}`;

/** Adds a table's RowsScanned series (once per table, when the snapshot first reports it). */
export type RowsScannedSeries = (table: string, rows: () => number) => void;

export function registerDebeziumMetrics(
  metrics: PluginMetrics,
  src: DebeziumMetricsSource,
): RowsScannedSeries {
  const base = { plugin: 'postgres', name: src.topicPrefix };
  const snapshot = { ...base, context: 'snapshot' };
  const streaming = { ...base, context: 'streaming' };
  const flag = (b: boolean) => (b ? 1 : 0);
  const s = src.snapshot;
  const gauge = (attr: string, help: string, labels: Record<string, string>, read: () => number) =>
    metrics.gaugeOf({ name: name(attr), help, labels }, read);

  gauge('snapshotrunning', 'Whether the snapshot is running (1) or not (0).', snapshot, () =>
    flag(s.running),
  );
  gauge('snapshotcompleted', 'Whether the snapshot completed (1) or not (0).', snapshot, () =>
    flag(s.completed),
  );
  gauge('snapshotaborted', 'Whether the snapshot was aborted (1) or not (0).', snapshot, () =>
    flag(s.aborted),
  );
  gauge('totaltablecount', 'Tables the snapshot includes.', snapshot, () => s.totalTables);
  gauge(
    'remainingtablecount',
    'Tables the snapshot has yet to copy.',
    snapshot,
    () => s.totalTables - s.tablesDone,
  );
  gauge(
    'snapshotdurationinseconds',
    'Seconds the snapshot has taken so far, or took (0 before one started).',
    snapshot,
    () => s.durationSeconds(src.now()),
  );
  const m = src.streaming;
  gauge(
    'millisecondsbehindsource',
    'Milliseconds between the last transaction commit in Postgres and its processing (-1: none yet).',
    streaming,
    () => m.behindSourceMs,
  );
  gauge('connected', 'Whether the replication stream is connected (1) or not (0).', streaming, () =>
    flag(src.connected()),
  );
  metrics.counterOf(
    {
      name: name('totalnumberofeventsseen'),
      help: 'Change events the stream received from Postgres.',
      labels: streaming,
    },
    () => m.events.seen,
  );
  metrics.counterOf(
    {
      name: name('numberofeventsfiltered'),
      help: 'Change events dropped by the table filters or skipped.operations.',
      labels: streaming,
    },
    () => m.events.filtered,
  );
  metrics.infoOf(
    {
      name: name('lasttransactionid_info'),
      help: 'The id of the last transaction the stream processed.',
      labels: streaming,
    },
    'last_transaction_id',
    () => (m.lastTransactionId === null ? null : String(m.lastTransactionId)),
  );
  gauge(
    'replicationslotlagbytes',
    "Bytes of WAL beyond the replication slot's confirmed position (not a Debezium attribute).",
    streaming,
    () => src.slotLagBytes(),
  );
  return (table, rows) =>
    gauge('rowsscanned', 'Rows the snapshot has read, by table.', { ...snapshot, table }, rows);
}

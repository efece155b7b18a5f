/**
 * Throughput of each connector over the last minutes, computed in the browser from
 * periodic scrapes of GET /metrics: the records a connector's tasks have moved
 * (source: source-record-write-total, records the broker acknowledged; sink:
 * sink-record-send-total, records handed to the task's put) summed over its tasks on
 * this worker, and the rate between two scrapes. A counter that goes down (a task
 * restarted, its metrics registered anew) restarts the rate from there instead of
 * showing a negative one.
 *
 * A sink's lag is the worker's records-lag metric when it serves one, else its group's
 * lag read from the page's groups API (while the Flow tab is shown).
 *
 * Plugins' own metrics (Debezium's snapshot and streaming metrics, the Parquet sink's
 * files written) are read by whatever names the worker serves: every series with a
 * `connector` label outside the runtime's kafka_connect_ groups, summed over tasks.
 * Absent metrics show as absent, never as zero.
 */
import { type Sample, sumBy } from './prometheus.ts';

export const SOURCE_RECORDS = 'kafka_connect_source_task_metrics_source_record_write_total';
export const SINK_RECORDS = 'kafka_connect_sink_task_metrics_sink_record_send_total';
/** A sink task's lag per partition (the JMX exporter's name for Kafka's records-lag). */
export const SINK_LAG = 'kafka_consumer_consumer_fetch_manager_metrics_records_lag';
/** Points kept per series: at a 2 s refresh, the last ten minutes. */
const MAX_POINTS = 300;

export interface Point {
  at: number;
  value: number;
}

export interface ConnectorTotals {
  /** Records moved by the connector's tasks on this worker, by connector. */
  records: Map<string, number>;
}

export function connectorRecords(samples: readonly Sample[]): Map<string, number> {
  const records = sumBy(samples, SOURCE_RECORDS, 'connector');
  for (const [connector, n] of sumBy(samples, SINK_RECORDS, 'connector'))
    records.set(connector, (records.get(connector) ?? 0) + n);
  return records;
}

/** A sink connector's consumer lag on this worker: records-lag summed over partitions. */
export function connectorLag(samples: readonly Sample[]): Map<string, number> {
  return sumBy(samples, SINK_LAG, 'connector');
}

/** Per-connector series of records per second and of any other value pushed (lag). */
export class FlowHistory {
  private readonly last = new Map<string, Point>();
  private readonly series = new Map<string, Point[]>();

  /** Adds one scrape's totals, taken at `at` (ms). */
  addTotals(at: number, totals: ReadonlyMap<string, number>): void {
    for (const [connector, total] of totals) {
      const previous = this.last.get(connector);
      this.last.set(connector, { at, value: total });
      if (previous === undefined || at <= previous.at) continue;
      const delta = total - previous.value;
      if (delta < 0) continue;
      this.append(`rate:${connector}`, { at, value: (delta * 1000) / (at - previous.at) });
    }
  }

  /** Adds a sampled value of a named series (e.g. `lag:<connector>`). */
  addValue(series: string, point: Point): void {
    this.append(series, point);
  }

  rate(connector: string): readonly Point[] {
    return this.series.get(`rate:${connector}`) ?? [];
  }

  values(series: string): readonly Point[] {
    return this.series.get(series) ?? [];
  }

  private append(name: string, point: Point): void {
    const list = this.series.get(name) ?? [];
    list.push(point);
    if (list.length > MAX_POINTS) list.splice(0, list.length - MAX_POINTS);
    this.series.set(name, list);
  }
}

/** A plugin metric of one connector, summed over its tasks and other labels but one. */
export interface PluginValue {
  name: string;
  /** Labels other than connector and task (e.g. a table), as `k=v` text. */
  detail: string;
  value: number;
}

/** The runtime's own series (Connect's groups, the sink consumers' lag). */
const RUNTIME_PREFIXES = ['kafka_connect_', 'kafka_consumer_'];

/** Every plugin series (a `connector` label, not kafka_connect_*) by connector. */
export function pluginMetrics(samples: readonly Sample[]): Map<string, PluginValue[]> {
  const sums = new Map<string, Map<string, PluginValue>>();
  for (const s of samples) {
    const connector = s.labels.connector;
    if (connector === undefined || RUNTIME_PREFIXES.some((p) => s.name.startsWith(p))) continue;
    if (!Number.isFinite(s.value)) continue;
    const detail = Object.entries(s.labels)
      .filter(([k]) => k !== 'connector' && k !== 'task')
      .map(([k, v]) => `${k}=${v}`)
      .join(', ');
    const byName = sums.get(connector) ?? new Map<string, PluginValue>();
    const id = `${s.name}{${detail}}`;
    const existing = byName.get(id);
    if (existing) existing.value += s.value;
    else byName.set(id, { name: s.name, detail, value: s.value });
    sums.set(connector, byName);
  }
  return new Map(
    [...sums].map(([c, m]) => [c, [...m.values()].sort((a, b) => a.name.localeCompare(b.name))]),
  );
}

/** Debezium's snapshot progress of a CDC connector, from whichever of its metrics exist. */
export interface SnapshotProgress {
  running: boolean | null;
  completed: boolean | null;
  aborted: boolean | null;
  totalTables: number | null;
  remainingTables: number | null;
  /** Rows scanned per table, when the metric is labelled by table. */
  rowsScanned: Array<{ table: string; rows: number }>;
}

/**
 * Reads Debezium's snapshot metrics by meaning rather than exact spelling: the JMX
 * exporter's `debezium_metrics_snapshotrunning` and `debezium_metrics_snapshot_running`
 * both read as snapshot-running. Null when the connector has none.
 */
export function snapshotProgress(values: readonly PluginValue[]): SnapshotProgress | null {
  const find = (key: string) =>
    values.find((v) => normalized(v.name) === key && !v.detail.includes('table='));
  const bool = (key: string) => {
    const v = find(key);
    return v === undefined ? null : v.value > 0;
  };
  const num = (key: string) => find(key)?.value ?? null;
  const rows = values
    .filter((v) => normalized(v.name) === 'rowsscanned')
    .map((v) => ({ table: /table=([^,]*)/.exec(v.detail)?.[1] ?? v.detail, rows: v.value }));
  const progress: SnapshotProgress = {
    running: bool('snapshotrunning'),
    completed: bool('snapshotcompleted'),
    aborted: bool('snapshotaborted'),
    totalTables: num('totaltablecount'),
    remainingTables: num('remainingtablecount'),
    rowsScanned: rows,
  };
  const any =
    progress.running !== null ||
    progress.completed !== null ||
    progress.totalTables !== null ||
    rows.length > 0;
  return any ? progress : null;
}

function normalized(name: string): string {
  return name
    .replace(/^debezium_metrics_/, '')
    .replace(/_total$/, '')
    .replaceAll('_', '')
    .toLowerCase();
}

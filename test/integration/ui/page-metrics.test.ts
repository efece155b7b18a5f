/**
 * What the status page computes from GET /metrics in the browser (ui/src/prometheus.ts,
 * ui/src/flow.ts), without a browser: the text format parsed, records and rates per
 * connector, plugin metrics by whatever names they have, and Debezium's snapshot
 * progress read from either spelling of its names, absent when there is none.
 */
import { describe, expect, it } from 'vitest';
import {
  connectorLag,
  connectorRecords,
  FlowHistory,
  pluginMetrics,
  SINK_LAG,
  SINK_RECORDS,
  SOURCE_RECORDS,
  snapshotProgress,
} from '../../../ui/src/flow.ts';
import { parsePrometheus } from '../../../ui/src/prometheus.ts';

const text = `# HELP ${SOURCE_RECORDS} Records written.
# TYPE ${SOURCE_RECORDS} counter
${SOURCE_RECORDS}{connector="cdc",task="0"} 10
${SOURCE_RECORDS}{connector="cdc",task="1"} 5
${SINK_RECORDS}{connector="lake",task="0"} 7
debezium_metrics_snapshot_running{connector="cdc",task="0"} 1
debezium_metrics_total_table_count{connector="cdc",task="0"} 4
debezium_metrics_remaining_table_count{connector="cdc",task="0"} 1
debezium_metrics_rows_scanned{connector="cdc",task="0",table="public.orders"} 1200
parquet_sink_files_written_total{connector="lake",task="0"} 3
${SINK_LAG}{connector="lake",task="0",topic="t",partition="0"} 4
${SINK_LAG}{connector="lake",task="0",topic="t",partition="1"} 2
label_escapes{connector="a\\"b\\\\c",task="0"} 2.5
kafka_log_log_size{topic="orders",partition="0"} +Inf
not a metric line
`;

describe('the page reading /metrics', () => {
  it('parses samples with labels, escapes and special values, skipping lines it cannot read', () => {
    const samples = parsePrometheus(text);
    expect(samples).toHaveLength(12);
    expect(samples.find((s) => s.name === 'label_escapes')?.labels.connector).toBe('a"b\\c');
    expect(samples.find((s) => s.name === 'kafka_log_log_size')?.value).toBe(Infinity);
  });

  it("sums a connector's records over its tasks, sources and sinks alike", () => {
    expect(connectorRecords(parsePrometheus(text))).toEqual(
      new Map([
        ['cdc', 15],
        ['lake', 7],
      ]),
    );
  });

  it("sums a sink's records-lag over its partitions", () => {
    expect(connectorLag(parsePrometheus(text))).toEqual(new Map([['lake', 6]]));
  });

  it('turns successive totals into records per second, restarting after a counter reset', () => {
    const flow = new FlowHistory();
    flow.addTotals(1000, new Map([['cdc', 100]]));
    flow.addTotals(3000, new Map([['cdc', 300]]));
    flow.addTotals(4000, new Map([['cdc', 50]]));
    flow.addTotals(5000, new Map([['cdc', 60]]));
    expect(flow.rate('cdc')).toEqual([
      { at: 3000, value: 100 },
      { at: 5000, value: 10 },
    ]);
    expect(flow.rate('other')).toEqual([]);
  });

  it("reads plugins' metrics (not the runtime's) and Debezium's snapshot progress by meaning, not exact spelling", () => {
    const plugin = pluginMetrics(parsePrometheus(text));
    expect(plugin.get('lake')).toEqual([
      { name: 'parquet_sink_files_written_total', detail: '', value: 3 },
    ]);
    expect(snapshotProgress(plugin.get('cdc')!)).toEqual({
      running: true,
      completed: null,
      aborted: null,
      totalTables: 4,
      remainingTables: 1,
      rowsScanned: [{ table: 'public.orders', rows: 1200 }],
    });
    const jmxSpelling = pluginMetrics(
      parsePrometheus('debezium_metrics_snapshotcompleted{connector="c",task="0"} 1\n'),
    );
    expect(snapshotProgress(jmxSpelling.get('c')!)?.completed).toBe(true);
    expect(snapshotProgress(plugin.get('lake')!)).toBeNull();
  });
});

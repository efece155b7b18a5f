/**
 * The Postgres CDC task's Debezium metrics (connectors/postgres-cdc/src/debezium-metrics.ts):
 * names and labels as the Debezium JMX exporter rules give them, values read from the
 * task's meters when scraped.
 */
import { describe, expect, it } from 'vitest';
import {
  registerDebeziumMetrics,
  SnapshotMeter,
  StreamingMeter,
} from '../../../connectors/postgres-cdc/src/debezium-metrics.ts';
import { ManualClock } from '../../../src/connect/api/index.ts';
import { ConnectMetrics } from '../../../src/connect/metrics/connect-metrics.ts';
import { parsePrometheusText, sampleOf } from './prometheus-text.ts';

function setUp() {
  const clock = new ManualClock(10_000);
  const metrics = new ConnectMetrics({ clock, processMetrics: false });
  const snapshot = new SnapshotMeter();
  const streaming = new StreamingMeter();
  let connected = false;
  const addTable = registerDebeziumMetrics(
    metrics.addTask({ connector: 'pg', task: 0 }, 'source').plugin,
    {
      topicPrefix: 'shop',
      snapshot,
      streaming,
      connected: () => connected,
      slotLagBytes: () => 4096,
      now: () => clock.now(),
    },
  );
  return {
    clock,
    snapshot,
    streaming,
    addTable,
    connect: () => {
      connected = true;
    },
    scrape: async () => parsePrometheusText(await metrics.scrape()),
  };
}

const base = { connector: 'pg', task: '0', plugin: 'postgres', name: 'shop' };
const snap = { ...base, context: 'snapshot' };
const stream = { ...base, context: 'streaming' };
const dbz = (attr: string) => `debezium_metrics_${attr}`;

describe('Debezium snapshot metrics', () => {
  it('follow a snapshot from running to completed, with rows scanned per table and its duration', async () => {
    const t = setUp();
    t.snapshot.started(2, t.clock.now());
    let orders = 0;
    t.addTable('public.orders', () => orders);
    orders = 150;
    t.snapshot.tableDone();
    t.clock.advance(2500);
    let f = await t.scrape();
    expect(sampleOf(f, dbz('snapshotrunning'), snap)).toBe(1);
    expect(sampleOf(f, dbz('snapshotcompleted'), snap)).toBe(0);
    expect(sampleOf(f, dbz('totaltablecount'), snap)).toBe(2);
    expect(sampleOf(f, dbz('remainingtablecount'), snap)).toBe(1);
    expect(sampleOf(f, dbz('rowsscanned'), { ...snap, table: 'public.orders' })).toBe(150);
    expect(sampleOf(f, dbz('snapshotdurationinseconds'), snap)).toBe(2.5);

    t.snapshot.tableDone();
    t.snapshot.ended(true, t.clock.now());
    t.clock.advance(60_000);
    f = await t.scrape();
    expect(sampleOf(f, dbz('snapshotrunning'), snap)).toBe(0);
    expect(sampleOf(f, dbz('snapshotcompleted'), snap)).toBe(1);
    expect(sampleOf(f, dbz('snapshotaborted'), snap)).toBe(0);
    expect(sampleOf(f, dbz('remainingtablecount'), snap)).toBe(0);
    // The duration stops with the snapshot.
    expect(sampleOf(f, dbz('snapshotdurationinseconds'), snap)).toBe(2.5);
  });

  it('say aborted for a snapshot that ended early', async () => {
    const t = setUp();
    t.snapshot.started(1, t.clock.now());
    t.snapshot.ended(false, t.clock.now());
    const f = await t.scrape();
    expect(sampleOf(f, dbz('snapshotaborted'), snap)).toBe(1);
    expect(sampleOf(f, dbz('snapshotcompleted'), snap)).toBe(0);
  });
});

describe('Debezium streaming metrics', () => {
  it('count events seen and filtered, and show the lag behind the source, the last transaction and the slot lag', async () => {
    const t = setUp();
    let f = await t.scrape();
    expect(sampleOf(f, dbz('millisecondsbehindsource'), stream)).toBe(-1);
    expect(sampleOf(f, dbz('connected'), stream)).toBe(0);
    expect(f.get(dbz('lasttransactionid_info'))!.samples).toEqual([]);

    t.connect();
    t.streaming.events.seen += 5;
    t.streaming.events.filtered += 2;
    // Committed in Postgres 300 ms before the task saw it.
    t.streaming.transactionCommitted(771, (t.clock.now() - 300) * 1000, t.clock.now());
    f = await t.scrape();
    expect(f.get(dbz('totalnumberofeventsseen'))!.type).toBe('counter');
    expect(sampleOf(f, dbz('totalnumberofeventsseen'), stream)).toBe(5);
    expect(sampleOf(f, dbz('numberofeventsfiltered'), stream)).toBe(2);
    expect(sampleOf(f, dbz('millisecondsbehindsource'), stream)).toBe(300);
    expect(sampleOf(f, dbz('connected'), stream)).toBe(1);
    expect(
      sampleOf(f, dbz('lasttransactionid_info'), { ...stream, last_transaction_id: '771' }),
    ).toBe(1);
    expect(sampleOf(f, dbz('replicationslotlagbytes'), stream)).toBe(4096);
  });
});

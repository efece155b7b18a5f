/**
 * PluginMetrics as a task sees it (src/connect/api/plugin-metrics.ts): the series read
 * at scrape time (counterOf, gaugeOf, infoOf), their removal with the task, and the
 * handle that records nothing for tasks run outside a worker.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock, noopPluginMetrics } from '../../../src/connect/api/index.ts';
import { ConnectMetrics } from '../../../src/connect/metrics/connect-metrics.ts';
import { parsePrometheusText, sampleOf } from './prometheus-text.ts';

const id = { connector: 'cdc', task: 0 };

async function scrape(metrics: ConnectMetrics) {
  return parsePrometheusText(await metrics.scrape());
}

describe('plugin metrics read at scrape time', () => {
  it('show a counter and a gauge read from the task, and an info series carrying a string label', async () => {
    const metrics = new ConnectMetrics({ clock: new ManualClock(0), processMetrics: false });
    const p = metrics.addTask(id, 'source').plugin;
    let seen = 0;
    let txid: string | null = null;
    p.counterOf({ name: 'events_seen_total', help: 'Events.' }, () => seen);
    p.infoOf(
      { name: 'last_txn_info', help: 'Last transaction.', labels: { context: 'streaming' } },
      'last_transaction_id',
      () => txid,
    );
    seen = 7;
    let f = await scrape(metrics);
    expect(f.get('events_seen_total')?.type).toBe('counter');
    expect(sampleOf(f, 'events_seen_total', { connector: 'cdc', task: '0' })).toBe(7);
    // No sample while the string is unknown.
    expect(f.get('last_txn_info')?.samples).toEqual([]);
    txid = '1234';
    f = await scrape(metrics);
    expect(f.get('last_txn_info')?.samples).toEqual([
      {
        name: 'last_txn_info',
        labels: { connector: 'cdc', task: '0', context: 'streaming', last_transaction_id: '1234' },
        value: 1,
      },
    ]);
  });

  it('lose the series of a task once it is removed, and refuse an info label the runtime sets', async () => {
    const metrics = new ConnectMetrics({ clock: new ManualClock(0), processMetrics: false });
    const p = metrics.addTask(id, 'sink').plugin;
    p.gaugeOf({ name: 'open_files', help: 'Open.' }, () => 3);
    expect(() => p.infoOf({ name: 'x_info', help: '' }, 'task', () => 'a')).toThrow(
      /set by the runtime/,
    );
    metrics.removeTask(id);
    expect((await scrape(metrics)).get('open_files')?.samples).toEqual([]);
  });

  it('have a no-op handle whose calls do nothing', () => {
    noopPluginMetrics.counter({ name: 'a_total', help: '' }).inc(3);
    noopPluginMetrics.gauge({ name: 'b', help: '' }).set(1);
    expect(() => noopPluginMetrics.infoOf({ name: 'c', help: '' }, 'l', () => 'x')).not.toThrow();
  });
});

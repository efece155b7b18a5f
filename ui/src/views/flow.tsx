/**
 * Flow: per connector, records per second over the last minutes (from /metrics,
 * flow.ts), a sink's consumer lag (its group connect-<name>, from the page's groups
 * API), a CDC connector's snapshot progress, and every other metric its plugin
 * registers (files written, events seen, ...), by whatever names the worker serves.
 */
import { Fragment } from 'preact';
import { Chart, formatBytes, formatNumber } from '../chart.tsx';
import { type FlowHistory, type PluginValue, snapshotProgress } from '../flow.ts';
import type { ExpandedConnectors } from '../types.ts';

export interface FlowProps {
  connectors: ExpandedConnectors | null;
  history: FlowHistory;
  plugin: ReadonlyMap<string, PluginValue[]>;
  records: ReadonlyMap<string, number>;
  now: number;
}

export function FlowView({ connectors, history, plugin, records, now }: FlowProps) {
  const names = Object.keys(connectors ?? {}).sort();
  if (names.length === 0) return <p class="muted">No connectors.</p>;
  return (
    <div class="flow">
      {names.map((name) => {
        const type = connectors?.[name]?.status?.type ?? connectors?.[name]?.info?.type;
        const values = plugin.get(name) ?? [];
        return (
          <section class="card" key={name} data-testid="flow" data-name={name}>
            <h3>
              {name} <span class="type">{type}</span>
            </h3>
            <p>
              Records moved on this worker:{' '}
              <strong data-testid="flow-records">
                {records.has(name) ? formatNumber(records.get(name)!) : '–'}
              </strong>
            </p>
            <div class="charts">
              <Chart points={history.rate(name)} label="Throughput" unit="records/s" now={now} />
              {type === 'sink' ? (
                <Chart
                  points={history.values(`lag:${name}`)}
                  label="Consumer lag"
                  unit="records"
                  now={now}
                />
              ) : null}
            </div>
            <Counters values={values} />
            <Snapshot values={values} />
            {values.length > 0 ? (
              <details>
                <summary>Plugin metrics ({values.length})</summary>
                <table class="metrics">
                  <tbody>
                    {values.map((v) => (
                      <tr key={`${v.name}{${v.detail}}`}>
                        <td>
                          <code>{v.name}</code>
                        </td>
                        <td class="muted">{v.detail}</td>
                        <td class="num">{formatNumber(v.value)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </details>
            ) : null}
          </section>
        );
      })}
    </div>
  );
}

function Snapshot({ values }: { values: readonly PluginValue[] }) {
  const s = snapshotProgress(values);
  if (s === null) return null;
  const total = s.totalTables;
  const done = total !== null && s.remainingTables !== null ? total - s.remainingTables : null;
  const fraction = s.completed ? 1 : total && done !== null ? done / total : null;
  const state = s.aborted
    ? 'aborted'
    : s.completed
      ? 'completed'
      : s.running
        ? 'running'
        : 'not started';
  return (
    <div class="snapshot" data-testid="snapshot">
      <p>
        Snapshot: {state}
        {total !== null && done !== null ? ` · ${done} of ${total} tables` : ''}
      </p>
      {fraction !== null ? (
        <progress max={1} value={fraction} aria-label="snapshot progress" />
      ) : null}
      {s.rowsScanned.length > 0 ? (
        <table class="metrics">
          <tbody>
            {s.rowsScanned.map((r) => (
              <tr key={r.table}>
                <td>{r.table}</td>
                <td class="num">{formatNumber(r.rows)} rows scanned</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

/**
 * The plugin's counters (`*_total`: files and bytes written, jobs added, ...) as
 * headline numbers; Debezium's are shown by Snapshot and in the full table.
 */
function Counters({ values }: { values: readonly PluginValue[] }) {
  const counters = values.filter(
    (v) => v.name.endsWith('_total') && !v.name.startsWith('debezium_'),
  );
  if (counters.length === 0) return null;
  return (
    <dl class="numbers" data-testid="plugin-counters">
      {counters.map((v) => (
        <Fragment key={`${v.name}{${v.detail}}`}>
          <dt>
            {v.name.replace(/_total$/, '').replaceAll('_', ' ')}
            {v.detail === '' ? '' : ` (${v.detail})`}
          </dt>
          <dd>{v.name.includes('bytes') ? formatBytes(v.value) : formatNumber(v.value)}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

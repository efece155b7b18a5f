/**
 * The status page, served by the worker at /ui/ (src/connect/rest/ui-resource.ts).
 *
 * One refresh loop owns the polling: every REFRESH_MS it reads the connectors with
 * their status and info and scrapes /metrics (throughput is computed here, flow.ts),
 * then bumps `tick`, which the shown tab uses to refresh its own data (topics, groups).
 * The loop waits for one round to finish before the next starts, so a slow worker is
 * never asked twice at once. `?refresh=<ms>` changes the period (250 ms to 60 s).
 */
import { render } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { getJson, getText, rest } from './api.ts';
import {
  connectorLag,
  connectorRecords,
  FlowHistory,
  type PluginValue,
  pluginMetrics,
} from './flow.ts';
import { parsePrometheus, type Sample, sumBy } from './prometheus.ts';
import type { ExpandedConnectors, GroupSummary } from './types.ts';
import { ClusterView } from './views/cluster.tsx';
import { ConnectorForm, type Editing } from './views/connector-form.tsx';
import { ConnectorsView } from './views/connectors.tsx';
import { FlowView } from './views/flow.tsx';
import { GroupsView } from './views/groups.tsx';
import { TopicsView } from './views/topics.tsx';
import './style.css';

const TABS = [
  ['connectors', 'Connectors'],
  ['cluster', 'Cluster'],
  ['new', 'New connector'],
  ['flow', 'Flow'],
  ['topics', 'Topics'],
  ['groups', 'Groups'],
] as const;
type Tab = (typeof TABS)[number][0];

const requested = Number(new URLSearchParams(location.search).get('refresh'));
const REFRESH_MS =
  Number.isFinite(requested) && requested > 0 ? Math.min(Math.max(requested, 250), 60_000) : 2000;

function tabOf(hash: string): Tab {
  const name = hash.replace(/^#/, '');
  return (TABS.find(([t]) => t === name)?.[0] ?? 'connectors') as Tab;
}

function App() {
  const [tab, setTab] = useState<Tab>(tabOf(location.hash));
  const [tick, setTick] = useState(0);
  const [connectors, setConnectors] = useState<ExpandedConnectors | null>(null);
  const [samples, setSamples] = useState<Sample[]>([]);
  const [errors, setErrors] = useState<string[]>([]);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [now, setNow] = useState(Date.now());
  const history = useMemo(() => new FlowHistory(), []);
  const wake = useRef<() => void>(() => {});
  const tabRef = useRef(tab);
  tabRef.current = tab;

  useEffect(() => {
    const onHash = () => setTab(tabOf(location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    let stopped = false;
    const round = async () => {
      const [c, m] = await Promise.allSettled([
        getJson<ExpandedConnectors>(rest('/connectors?expand=status&expand=info')),
        getText(rest('/metrics')),
      ]);
      const failed: string[] = [];
      const at = Date.now();
      let lags = new Map<string, number>();
      if (c.status === 'fulfilled') setConnectors(c.value);
      else failed.push((c.reason as Error).message);
      if (m.status === 'fulfilled') {
        const parsed = parsePrometheus(m.value);
        setSamples(parsed);
        history.addTotals(at, connectorRecords(parsed));
        lags = connectorLag(parsed);
        for (const [connector, value] of lags) history.addValue(`lag:${connector}`, { at, value });
      } else failed.push((m.reason as Error).message);
      // Without the lag metric, a sink's lag is its group's, read while Flow is shown.
      if (tabRef.current === 'flow') {
        try {
          const g = await getJson<{ groups: GroupSummary[] }>('api/groups');
          for (const group of g.groups) {
            const connector = group.groupId.slice('connect-'.length);
            if (group.groupId.startsWith('connect-') && !lags.has(connector))
              history.addValue(`lag:${connector}`, { at, value: group.totalLag });
          }
        } catch (e) {
          failed.push((e as Error).message);
        }
      }
      setErrors(failed);
      setNow(at);
      setTick((t) => t + 1);
    };
    const loop = async () => {
      while (!stopped) {
        await round();
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, REFRESH_MS);
          wake.current = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    };
    void loop();
    return () => {
      stopped = true;
      wake.current();
    };
  }, [history]);

  const refresh = useCallback(() => wake.current(), []);
  const records = useMemo(() => connectorRecords(samples), [samples]);
  const plugin = useMemo<Map<string, PluginValue[]>>(() => pluginMetrics(samples), [samples]);
  const sizes = useMemo(() => sumBy(samples, 'kafka_log_log_size', 'topic'), [samples]);
  const rates = useCallback(
    (name: string) => {
      const r = history.rate(name);
      return r.length === 0 ? undefined : r[r.length - 1]!.value;
    },
    // `samples` is not read, but a new scrape changes the rates.
    [history, samples],
  );
  const edit = useCallback(
    (name: string) => {
      const config = connectors?.[name]?.info?.config;
      if (config === undefined) return;
      setEditing({ name, config });
      location.hash = 'new';
    },
    [connectors],
  );
  const go = (t: Tab) => {
    if (t === 'new' && tab !== 'new') setEditing(null);
    location.hash = t;
  };

  return (
    <>
      <header class="top">
        <h1>connect-ts</h1>
        <nav>
          {TABS.map(([t, label]) => (
            <button
              type="button"
              key={t}
              class={t === tab ? 'tab active' : 'tab'}
              aria-current={t === tab ? 'page' : undefined}
              onClick={() => go(t)}
            >
              {label}
            </button>
          ))}
        </nav>
      </header>
      {errors.length > 0 ? (
        <div class="error banner" role="alert">
          {errors.map((e) => (
            <p key={e}>{e}</p>
          ))}
        </div>
      ) : null}
      <main>
        {tab === 'connectors' ? (
          <ConnectorsView
            connectors={connectors}
            records={records}
            rates={rates}
            refresh={refresh}
            edit={edit}
          />
        ) : null}
        {tab === 'cluster' ? <ClusterView connectors={connectors} /> : null}
        {tab === 'new' ? (
          <ConnectorForm
            key={editing?.name ?? ''}
            editing={editing}
            saved={() => {
              refresh();
              location.hash = 'connectors';
            }}
          />
        ) : null}
        {tab === 'flow' ? (
          <FlowView
            connectors={connectors}
            history={history}
            plugin={plugin}
            records={records}
            now={now}
          />
        ) : null}
        {tab === 'topics' ? <TopicsView tick={tick} sizes={sizes} /> : null}
        {tab === 'groups' ? <GroupsView tick={tick} /> : null}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);

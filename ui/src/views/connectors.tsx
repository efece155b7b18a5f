/**
 * Connectors and their tasks: state, the worker each runs on, records moved (from
 * /metrics), the trace of a FAILED connector or task, and Kafka Connect's lifecycle
 * calls as buttons. A button only asks; the state shown changes when the next refresh
 * reads it back from the REST API, as any client of Connect sees it.
 */
import { useState } from 'preact/hooks';
import { ApiError, request, rest } from '../api.ts';
import { formatNumber } from '../chart.tsx';
import type { ConnectorStatus, ExpandedConnectors, StateEntry } from '../types.ts';

export interface ConnectorsProps {
  connectors: ExpandedConnectors | null;
  records: ReadonlyMap<string, number>;
  rates: (connector: string) => number | undefined;
  refresh: () => void;
  edit: (name: string) => void;
}

interface Action {
  label: string;
  method: string;
  path: (name: string) => string;
  confirm?: string;
}

const ACTIONS: readonly Action[] = [
  { label: 'Pause', method: 'PUT', path: (n) => `/connectors/${n}/pause` },
  { label: 'Resume', method: 'PUT', path: (n) => `/connectors/${n}/resume` },
  {
    label: 'Restart',
    method: 'POST',
    path: (n) => `/connectors/${n}/restart?includeTasks=true&onlyFailed=false`,
  },
  { label: 'Stop', method: 'PUT', path: (n) => `/connectors/${n}/stop` },
  {
    label: 'Delete',
    method: 'DELETE',
    path: (n) => `/connectors/${n}`,
    confirm: 'Delete connector %s? Its config is removed from the cluster.',
  },
];

export function ConnectorsView({ connectors, records, rates, refresh, edit }: ConnectorsProps) {
  if (connectors === null) return <p class="muted">Loading connectors…</p>;
  const names = Object.keys(connectors).sort();
  if (names.length === 0)
    return <p class="muted">No connectors yet: create one under “New connector”.</p>;
  return (
    <div class="connectors">
      {names.map((name) => (
        <ConnectorCard
          key={name}
          name={name}
          status={connectors[name]?.status}
          connectorClass={connectors[name]?.info?.config['connector.class']}
          records={records.get(name)}
          rate={rates(name)}
          refresh={refresh}
          edit={edit}
        />
      ))}
    </div>
  );
}

interface CardProps {
  name: string;
  status: ConnectorStatus | undefined;
  connectorClass: string | undefined;
  records: number | undefined;
  rate: number | undefined;
  refresh: () => void;
  edit: (name: string) => void;
}

function ConnectorCard({ name, status, connectorClass, records, rate, refresh, edit }: CardProps) {
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (label: string, method: string, path: string, confirmText?: string) => {
    if (confirmText !== undefined && !window.confirm(confirmText.replace('%s', name))) return;
    setBusy(true);
    try {
      await request(method, rest(path));
      setMessage({ text: `${label}: requested`, error: false });
    } catch (e) {
      setMessage({ text: e instanceof ApiError ? e.message : String(e), error: true });
    } finally {
      setBusy(false);
      refresh();
    }
  };
  const encoded = encodeURIComponent(name);
  const state = status?.connector.state ?? 'UNKNOWN';
  return (
    <section class="card" data-testid="connector" data-name={name} data-state={state}>
      <header class="card-head">
        <h3>{name}</h3>
        <span class="type">{status?.type ?? ''}</span>
        <State entry={status?.connector} testid="connector-state" />
        <span class="muted class-name">{connectorClass ?? ''}</span>
      </header>
      <dl class="numbers">
        <dt>Records</dt>
        <dd data-testid="records">{records === undefined ? '–' : formatNumber(records)}</dd>
        <dt>Records/s</dt>
        <dd data-testid="rate">{rate === undefined ? '–' : formatNumber(rate)}</dd>
        <dt>Worker</dt>
        <dd>{status?.connector.worker_id ?? '–'}</dd>
      </dl>
      <div class="actions">
        {ACTIONS.map((a) => (
          <button
            type="button"
            key={a.label}
            disabled={busy}
            onClick={() => run(a.label, a.method, a.path(encoded), a.confirm)}
          >
            {a.label}
          </button>
        ))}
        <button type="button" disabled={busy} onClick={() => edit(name)}>
          Edit
        </button>
      </div>
      {message ? (
        <p class={message.error ? 'error' : 'muted'} role="status">
          {message.text}
        </p>
      ) : null}
      <Trace entry={status?.connector} what="connector" />
      <table class="tasks">
        <thead>
          <tr>
            <th>Task</th>
            <th>State</th>
            <th>Worker</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(status?.tasks ?? []).map((t) => (
            <tr key={t.id} data-testid="task" data-task={t.id} data-state={t.state}>
              <td>{t.id}</td>
              <td>
                <State entry={t} testid="task-state" />
                <Trace entry={t} what={`task ${t.id}`} />
              </td>
              <td>{t.worker_id}</td>
              <td>
                <button
                  type="button"
                  disabled={busy}
                  onClick={() =>
                    run(
                      `Restart task ${t.id}`,
                      'POST',
                      `/connectors/${encoded}/tasks/${t.id}/restart`,
                    )
                  }
                >
                  Restart task
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function State({ entry, testid }: { entry: StateEntry | undefined; testid?: string }) {
  const state = entry?.state ?? 'UNKNOWN';
  return (
    <span class={`state state-${state.toLowerCase()}`} data-testid={testid}>
      {state}
    </span>
  );
}

function Trace({ entry, what }: { entry: StateEntry | undefined; what: string }) {
  if (entry?.trace === undefined || entry.trace === '') return null;
  return (
    <details class="trace" open={entry.state === 'FAILED'}>
      <summary>Trace of the {what}</summary>
      <pre data-testid="trace">{entry.trace}</pre>
    </details>
  );
}

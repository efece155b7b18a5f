/**
 * The cluster: which worker runs which connector and task, grouped by worker id (the
 * worker ids of GET /connectors?expand=status), and the Kafka cluster they share.
 */
import { useEffect, useState } from 'preact/hooks';
import { getJson, rest } from '../api.ts';
import type { ExpandedConnectors } from '../types.ts';
import { State } from './connectors.tsx';

interface ServerInfo {
  version: string;
  kafka_cluster_id: string;
  connect_ts_version?: string;
}

interface Placement {
  what: string;
  connector: string;
  state: string;
}

export function ClusterView({ connectors }: { connectors: ExpandedConnectors | null }) {
  const [info, setInfo] = useState<ServerInfo | null>(null);
  useEffect(() => {
    getJson<ServerInfo>(rest('/')).then(setInfo, () => setInfo(null));
  }, []);
  const workers = new Map<string, Placement[]>();
  const place = (worker: string | undefined, p: Placement) => {
    const key = worker || '(unassigned)';
    workers.set(key, [...(workers.get(key) ?? []), p]);
  };
  for (const [name, c] of Object.entries(connectors ?? {})) {
    const s = c.status;
    if (s === undefined) continue;
    place(s.connector.worker_id, { what: 'connector', connector: name, state: s.connector.state });
    for (const t of s.tasks)
      place(t.worker_id, { what: `task ${t.id}`, connector: name, state: t.state });
  }
  return (
    <div>
      <p class="muted">
        {info === null
          ? ''
          : `Kafka Connect REST ${info.version} · connect-ts ${info.connect_ts_version ?? ''} · Kafka cluster ${info.kafka_cluster_id}`}
      </p>
      {workers.size === 0 ? <p class="muted">Nothing runs yet.</p> : null}
      <div class="workers">
        {[...workers].sort().map(([worker, placements]) => (
          <section class="card" data-testid="worker" data-worker={worker} key={worker}>
            <h3>{worker}</h3>
            <table>
              <tbody>
                {placements.map((p) => (
                  <tr key={`${p.connector}/${p.what}`}>
                    <td>{p.connector}</td>
                    <td>{p.what}</td>
                    <td>
                      <State entry={{ state: p.state, worker_id: worker }} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        ))}
      </div>
    </div>
  );
}

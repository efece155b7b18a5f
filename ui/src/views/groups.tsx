/**
 * Consumer groups (the page's groups API): state, members with what they are assigned,
 * and per partition the committed offset, end offset and lag. Sink connectors read as
 * groups connect-<name>; the workers' own group has protocol type `connect`.
 */
import { useEffect, useState } from 'preact/hooks';
import { getJson } from '../api.ts';
import { formatNumber } from '../chart.tsx';
import type { GroupSummary } from '../types.ts';

export function GroupsView({ tick }: { tick: number }) {
  const [groups, setGroups] = useState<{ groups: GroupSummary[]; omitted: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getJson<{ groups: GroupSummary[]; omitted: number }>('api/groups').then(
      (g) => {
        setGroups(g);
        setError(null);
      },
      (e: Error) => setError(e.message),
    );
  }, [tick]);
  return (
    <div>
      {error ? <p class="error">{error}</p> : null}
      {groups?.groups.length === 0 ? <p class="muted">No groups.</p> : null}
      {groups && groups.omitted > 0 ? (
        <p class="muted">{groups.omitted} more groups are not shown.</p>
      ) : null}
      {(groups?.groups ?? []).map((g) => (
        <section class="card" key={g.groupId} data-testid="group" data-name={g.groupId}>
          <h3>
            {g.groupId} <span class="type">{g.protocolType || 'no protocol'}</span>{' '}
            <span class="state">{g.state}</span>
          </h3>
          <p>
            Total lag: <strong data-testid="group-lag">{formatNumber(g.totalLag)}</strong>
          </p>
          <table>
            <thead>
              <tr>
                <th>Member</th>
                <th>Client</th>
                <th>Host</th>
                <th>Assigned</th>
              </tr>
            </thead>
            <tbody>
              {g.members.map((m) => (
                <tr key={m.memberId}>
                  <td>
                    <code>{m.memberId}</code>
                  </td>
                  <td>{m.clientId}</td>
                  <td>{m.clientHost}</td>
                  <td>
                    {m.assignment.map((a) => `${a.topic} [${a.partitions.join(', ')}]`).join('; ')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {g.offsets.length > 0 ? (
            <table>
              <thead>
                <tr>
                  <th>Partition</th>
                  <th class="num">Committed</th>
                  <th class="num">End</th>
                  <th class="num">Lag</th>
                </tr>
              </thead>
              <tbody>
                {g.offsets.map((o) => (
                  <tr key={`${o.topic}-${o.partition}`}>
                    <td>
                      {o.topic}-{o.partition}
                    </td>
                    <td class="num">{o.committedOffset}</td>
                    <td class="num">{o.endOffset ?? '–'}</td>
                    <td class="num">{o.lag ?? '–'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </section>
      ))}
    </div>
  );
}

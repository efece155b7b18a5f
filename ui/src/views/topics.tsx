/**
 * Topics: partitions, records held (end minus log start offset), size on disk when the
 * worker's /metrics carries the embedded broker's kafka_log_log_size, and how each is
 * kept (cleanup policy, retention). Choosing one shows a live tail of a partition:
 * the last records with key, headers and value, JSON values pretty-printed.
 */
import { useEffect, useState } from 'preact/hooks';
import { getJson } from '../api.ts';
import { formatBytes, formatNumber } from '../chart.tsx';
import type { PartitionTail, ShownBytes, TopicSummary } from '../types.ts';

export interface TopicsProps {
  tick: number;
  /** Bytes per topic from /metrics (kafka_log_log_size); empty when not served. */
  sizes: ReadonlyMap<string, number>;
}

const TAIL_LIMIT = 20;

export function TopicsView({ tick, sizes }: TopicsProps) {
  const [topics, setTopics] = useState<TopicSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [showInternal, setShowInternal] = useState(false);
  useEffect(() => {
    getJson<{ topics: TopicSummary[] }>('api/topics').then(
      (t) => {
        setTopics(t.topics);
        setError(null);
      },
      (e: Error) => setError(e.message),
    );
  }, [tick]);
  const shown = (topics ?? []).filter((t) => showInternal || !t.internal);
  return (
    <div>
      {error ? <p class="error">{error}</p> : null}
      <label class="inline">
        <input
          type="checkbox"
          checked={showInternal}
          onChange={(e) => setShowInternal((e.target as HTMLInputElement).checked)}
        />{' '}
        Show internal topics
      </label>
      <table class="topics" data-testid="topics">
        <thead>
          <tr>
            <th>Topic</th>
            <th class="num">Partitions</th>
            <th class="num">Records</th>
            <th class="num">Size</th>
            <th>Cleanup</th>
            <th>Retention</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((t) => {
            const held = t.partitions.reduce((n, p) => n + (p.endOffset - p.startOffset), 0);
            const size = sizes.get(t.name);
            return (
              <tr
                key={t.name}
                data-testid="topic"
                data-name={t.name}
                class={selected === t.name ? 'selected' : ''}
              >
                <td>
                  <button type="button" class="link" onClick={() => setSelected(t.name)}>
                    {t.name}
                  </button>
                </td>
                <td class="num">{t.partitions.length}</td>
                <td class="num" data-testid="topic-records">
                  {formatNumber(held)}
                </td>
                <td class="num">{size === undefined ? '–' : formatBytes(size)}</td>
                <td>{t.configs['cleanup.policy'] ?? '–'}</td>
                <td>{retention(t.configs)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {selected !== null ? (
        <Tail
          key={selected}
          topic={topics?.find((t) => t.name === selected) ?? null}
          name={selected}
          tick={tick}
        />
      ) : null}
    </div>
  );
}

function retention(configs: Record<string, string | null>): string {
  const ms = Number(configs['retention.ms']);
  const bytes = Number(configs['retention.bytes']);
  const parts = [
    configs['retention.ms'] == null ? null : ms < 0 ? 'forever' : `${formatDuration(ms)}`,
    configs['retention.bytes'] == null || bytes < 0 ? null : `${formatBytes(bytes)} a partition`,
  ].filter((p) => p !== null);
  return parts.length === 0 ? '–' : parts.join(', ');
}

function formatDuration(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1000, 's'],
  ];
  for (const [size, unit] of units)
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}

function Tail({ topic, name, tick }: { topic: TopicSummary | null; name: string; tick: number }) {
  const [partition, setPartition] = useState(0);
  const [live, setLive] = useState(true);
  const [tail, setTail] = useState<PartitionTail | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Refreshes with the page while live; a paused tail stays on what it shows.
  useEffect(() => {
    if (!live && tail !== null && tail.partition === partition) return;
    getJson<PartitionTail>(
      `api/topics/${encodeURIComponent(name)}/partitions/${partition}/records?limit=${TAIL_LIMIT}`,
    ).then(
      (t) => {
        setTail(t);
        setError(null);
      },
      (e: Error) => setError(e.message),
    );
  }, [name, partition, live, tick]);
  return (
    <section class="card tail" data-testid="tail">
      <h3>
        Last records of {name}
        <select
          value={partition}
          onChange={(e) => setPartition(Number((e.target as HTMLSelectElement).value))}
        >
          {(topic?.partitions ?? [{ partition: 0 }]).map((p) => (
            <option value={p.partition} key={p.partition}>
              partition {p.partition}
            </option>
          ))}
        </select>
        <label class="inline">
          <input
            type="checkbox"
            checked={live}
            onChange={(e) => setLive((e.target as HTMLInputElement).checked)}
          />{' '}
          Live
        </label>
      </h3>
      {error ? <p class="error">{error}</p> : null}
      {tail === null ? null : (
        <p class="muted">
          Offsets {tail.startOffset} to {tail.endOffset}; showing the last {tail.records.length}.
        </p>
      )}
      <ol class="records">
        {[...(tail?.records ?? [])].reverse().map((r) => (
          <li key={r.offset} data-testid="record" data-offset={r.offset}>
            <div class="record-head">
              <span>offset {r.offset}</span>
              <span class="muted">{new Date(r.timestamp).toISOString()}</span>
              <span>
                key <Bytes value={r.key} />
              </span>
            </div>
            {r.headers.length > 0 ? (
              <div class="headers">
                {r.headers.map((h, i) => (
                  <span class="header" key={`${h.key}-${i}`}>
                    {h.key}: <Bytes value={h.value} />
                  </span>
                ))}
              </div>
            ) : null}
            <Value value={r.value} />
          </li>
        ))}
      </ol>
    </section>
  );
}

function Bytes({ value }: { value: ShownBytes | null }) {
  if (value === null) return <code class="muted">null</code>;
  return (
    <code title={value.encoding === 'base64' ? 'binary, shown as base64' : undefined}>
      {value.data}
      {value.truncated ? '…' : ''}
    </code>
  );
}

function Value({ value }: { value: ShownBytes | null }) {
  if (value === null) return <pre class="value muted">null (tombstone)</pre>;
  let text = value.data;
  if (value.encoding === 'utf8' && !value.truncated) {
    try {
      text = JSON.stringify(JSON.parse(value.data), null, 2);
    } catch {
      // not JSON: shown as it is
    }
  }
  return (
    <pre class="value" data-testid="record-value">
      {text}
      {value.truncated ? `\n… (${formatBytes(value.size)} in all)` : ''}
      {value.encoding === 'base64' ? '\n(binary, base64)' : ''}
    </pre>
  );
}

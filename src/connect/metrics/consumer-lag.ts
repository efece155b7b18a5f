/**
 * A sink task's consumer lag per topic partition: the partition's end offset minus the
 * task's position (the offset after the last record it was handed), what Kafka's
 * consumer reports as consumer-fetch-manager-metrics `records-lag` and the Prometheus
 * JMX exporter's generic Kafka client rule names
 * `kafka_consumer_consumer_fetch_manager_metrics_records_lag{client_id,topic,partition}`
 * (plus our `connector` and `task` labels).
 *
 * Kafka's consumer reads the high watermark off every Fetch answer; our group consumer
 * does not hand it over, so the end offsets are asked of the broker (ListOffsets,
 * through the worker's admin client) only when Prometheus scrapes: ConnectMetrics
 * awaits `refresh()` before it formats the answer, at most once a second per task and
 * for at most REFRESH_TIMEOUT_MS (a slow or unreachable broker leaves the previous
 * values). Nobody scraping costs nothing; a scrape costs one request per topic, shared
 * by the worker's sink tasks (adminEndOffsets).
 *
 * A partition shows once the task has a position in it (a record delivered); the end
 * offset is the high watermark (read_uncommitted), so with isolation.level=read_committed
 * the lag includes an open transaction's records.
 */
import type { Clock } from '../../util/clock.ts';

/** The end offset of each partition of `topics` (the worker asks its admin client). */
export type EndOffsets = (
  topics: readonly string[],
) => Promise<ReadonlyArray<{ topic: string; partition: number; offset: number }>>;

export interface PartitionLag {
  topic: string;
  partition: number;
  lag: number;
}

/** Scrapes closer together than this reuse the end offsets read last. */
const MIN_REFRESH_INTERVAL_MS = 1000;
/** How long a scrape waits for the end offsets before it answers with the last ones. */
export const REFRESH_TIMEOUT_MS = 2000;

export class ConsumerLag {
  private readonly ends = new Map<string, number>();
  private refreshing: Promise<void> | null = null;
  private refreshedAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly clientId: string,
    private readonly endOffsets: EndOffsets,
    /** The task's positions now (the runner's current offsets). */
    private readonly positions: () => Iterable<{
      topic: string;
      partition: number;
      offset: number;
    }>,
    private readonly clock: Clock,
  ) {}

  /** Ask the broker for the end offsets of the partitions the task has a position in. */
  refresh(): Promise<void> {
    if (this.refreshing !== null) return this.refreshing;
    if (this.clock.now() - this.refreshedAt < MIN_REFRESH_INTERVAL_MS) return Promise.resolve();
    const topics = new Set<string>();
    for (const p of this.positions()) topics.add(p.topic);
    if (topics.size === 0) return Promise.resolve();
    this.refreshing = this.endOffsets([...topics])
      .then((list) => {
        this.ends.clear();
        for (const e of list) this.ends.set(key(e.topic, e.partition), e.offset);
      })
      // The previous values stay: a scrape must not fail because the broker is away.
      .catch(() => undefined)
      .finally(() => {
        this.refreshing = null;
        this.refreshedAt = this.clock.now();
      });
    return this.refreshing;
  }

  /** Lag per partition with a position and a known end offset. */
  *samples(): Generator<PartitionLag> {
    for (const p of this.positions()) {
      const end = this.ends.get(key(p.topic, p.partition));
      if (end === undefined) continue;
      yield { topic: p.topic, partition: p.partition, lag: Math.max(0, end - p.offset) };
    }
  }
}

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/**
 * EndOffsets over a kafkajs admin client's fetchTopicOffsets: one request per topic,
 * shared by every task that asks while it is in flight. A scrape refreshes all tasks
 * at once, so the sink tasks of one connector (which read the same topics) make one
 * request per topic between them, not one each. Make one per worker.
 */
export function adminEndOffsets(
  admin: () => {
    fetchTopicOffsets(topic: string): Promise<Array<{ partition: number; high: string }>>;
  },
): EndOffsets {
  type Ends = Array<{ topic: string; partition: number; offset: number }>;
  const inFlight = new Map<string, Promise<Ends>>();
  const ask = (topic: string): Promise<Ends> => {
    let answer = inFlight.get(topic);
    if (answer === undefined) {
      answer = admin()
        .fetchTopicOffsets(topic)
        .then((list) =>
          list.map((p) => ({ topic, partition: p.partition, offset: Number(p.high) })),
        )
        .finally(() => inFlight.delete(topic));
      inFlight.set(topic, answer);
    }
    return answer;
  };
  return async (topics) => (await Promise.all(topics.map(ask))).flat();
}

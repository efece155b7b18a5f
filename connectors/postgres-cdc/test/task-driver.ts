/**
 * Drives a source task the way the Connect runtime does, without a broker: start with
 * an OffsetStorageReader, poll in a loop, "produce" each record (acknowledged at once,
 * in poll order, so commitRecord runs in ack order), and on request store the offset
 * of the last acknowledged record and then call commit(), as an offset flush does.
 * A crash is stop() without a final offset flush: offsets stay as last stored.
 */
import type {
  OffsetStorageReader,
  SourceOffset,
  SourcePartition,
  SourceRecord,
  SourceTask,
  TaskConfig,
} from '../../../src/connect/api/index.ts';
import { ManualClock, noopPluginMetrics } from '../../../src/connect/api/index.ts';

/** The runtime's offset store for one connector, in memory; survives task instances. */
export class InMemoryOffsets implements OffsetStorageReader {
  readonly stored = new Map<string, SourceOffset>();

  private static key(p: SourcePartition): string {
    return JSON.stringify(Object.entries(p).sort(([a], [b]) => a.localeCompare(b)));
  }

  put(partition: SourcePartition, offset: SourceOffset): void {
    // Through JSON, as the offsets topic stores them.
    this.stored.set(InMemoryOffsets.key(partition), JSON.parse(JSON.stringify(offset)));
  }

  async offset(partition: SourcePartition): Promise<SourceOffset | null> {
    return this.stored.get(InMemoryOffsets.key(partition)) ?? null;
  }

  async offsets(
    partitions: readonly SourcePartition[],
  ): Promise<Map<SourcePartition, SourceOffset>> {
    const out = new Map<SourcePartition, SourceOffset>();
    for (const p of partitions) {
      const o = await this.offset(p);
      if (o) out.set(p, o);
    }
    return out;
  }
}

export class TaskDriver {
  /** Every record acknowledged, in order: what the topics received. */
  readonly delivered: SourceRecord[] = [];
  /** Most records any one poll returned. */
  largestPoll = 0;
  private lastAcked: SourceRecord | null = null;
  private nextOffset = 0;
  readonly clock = new ManualClock(1_700_000_000_000);

  /** Every reportTrouble call of the task, in order (null: cleared). */
  readonly troubles: (string | null)[] = [];
  /** topicCreationOverride calls of the task, by topic. */
  readonly topicOverrides = new Map<string, Readonly<Record<string, string>>>();
  /** The worker's bootstrap.servers as the context shows it (none: no worker). */
  bootstrapServers: readonly string[] | undefined;

  constructor(
    readonly task: SourceTask,
    readonly offsets: InMemoryOffsets,
  ) {}

  async start(config: TaskConfig): Promise<void> {
    await this.task.start(config, {
      connectorName: 'pg-cdc',
      taskId: 0,
      offsetStorageReader: this.offsets,
      clock: this.clock,
      reportTrouble: (detail) => this.troubles.push(detail),
      pluginMetrics: () => noopPluginMetrics,
      transactionContext: null,
      topicCreationOverride: (topic, configs) => this.topicOverrides.set(topic, configs),
      ...(this.bootstrapServers ? { bootstrapServers: this.bootstrapServers } : {}),
    });
  }

  /** One poll; its records are produced and acknowledged in order. */
  async pollOnce(): Promise<SourceRecord[]> {
    const records = (await this.task.poll()) ?? [];
    this.largestPoll = Math.max(this.largestPoll, records.length);
    for (const r of records) {
      this.delivered.push(r);
      this.lastAcked = r;
      await this.task.commitRecord?.(r, {
        topic: r.topic,
        partition: 0,
        offset: this.nextOffset++,
        timestamp: this.clock.now(),
      });
    }
    return records;
  }

  /** Poll until `done(delivered)` holds. */
  async pollUntil(
    what: string,
    done: (delivered: SourceRecord[]) => boolean,
    ms = 20_000,
  ): Promise<SourceRecord[]> {
    const deadline = Date.now() + ms;
    while (!done(this.delivered)) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}; delivered ${this.delivered.length} records`,
        );
      await this.pollOnce();
    }
    return this.delivered;
  }

  /** Poll until poll() throws, and return what it threw. */
  async pollUntilFailure(ms = 20_000): Promise<Error> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      try {
        await this.pollOnce();
      } catch (e) {
        return e as Error;
      }
    }
    throw new Error(
      `timed out waiting for the task to fail; delivered ${this.delivered.length} records, troubles: ${this.troubles.join(' | ')}`,
    );
  }

  /** An offset flush: store the last acknowledged record's offset, then commit(). */
  async flushOffsets(upTo: SourceRecord | null = this.lastAcked): Promise<void> {
    if (upTo) this.offsets.put(upTo.sourcePartition, upTo.sourceOffset);
    await this.task.commit?.();
  }
}

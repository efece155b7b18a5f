/**
 * DatagenTask: generates records for its share of the sequence (see
 * datagen-connector.ts), rate-limited against the injected clock.
 *
 * Offsets: source partition `{ task: i, tasks: N }`, source offset `{ seq }` = the last
 * sequence number produced. A restarted task resumes at seq + N, so a clean restart
 * continues the sequence without gaps or repeats. Changing tasks.max changes the
 * partitions, and the new layout starts from the beginning.
 *
 * Rate limit: by the clock, `1 + elapsed * rate` records may have been produced since
 * start (the first one at once); poll returns what is allowed (at most batch.size)
 * and otherwise waits for the next record's time (at most a second), woken by stop().
 */
import {
  type Clock,
  ConnectException,
  parseConfigOrThrow,
  type SourceRecord,
  type SourceTask,
  type SourceTaskContext,
  type TaskConfig,
  Wakeup,
} from '../../src/connect/api/index.ts';
import { datagenConfigDefs, TASK_COUNT, TASK_INDEX } from './datagen-config.ts';
import { KEY_SCHEMA, keyFor, VALUE_SCHEMA, valueFor } from './datagen-record.ts';
import { DATAGEN_VERSION } from './version.ts';

const MAX_WAIT_MS = 1000;

export class DatagenTask implements SourceTask {
  private topic = '';
  private index = 0;
  private count = 1;
  /** Records per millisecond for this task; Infinity when unlimited. */
  private ratePerMs = Number.POSITIVE_INFINITY;
  private iterations = -1;
  private cardinality = 1000;
  private batchSize = 1000;
  private payload = '';
  private clock!: Clock;
  private next = 0;
  private startedAt = 0;
  private produced = 0;
  private stopped = false;
  private readonly wakeup = new Wakeup();

  version(): string {
    return DATAGEN_VERSION;
  }

  async start(config: TaskConfig, context: SourceTaskContext): Promise<void> {
    const { values } = parseConfigOrThrow(datagenConfigDefs, config);
    this.topic = (values.topic ?? values['kafka.topic']) as string;
    this.index = Number(config[TASK_INDEX] ?? 0);
    this.count = Number(config[TASK_COUNT] ?? 1);
    if (!Number.isInteger(this.index) || !Number.isInteger(this.count) || this.count < 1) {
      throw new ConnectException(`Bad task layout ${this.index}/${this.count}`);
    }
    const rate = values['records.per.second'] as number;
    this.ratePerMs = rate === 0 ? Number.POSITIVE_INFINITY : rate / this.count / 1000;
    this.iterations = values.iterations as number;
    this.cardinality = values['key.cardinality'] as number;
    this.batchSize = values['batch.size'] as number;
    this.payload = 'x'.repeat(values['record.size'] as number);
    this.clock = context.clock;
    const committed = await context.offsetStorageReader.offset(this.partition());
    this.next =
      committed?.seq === undefined || committed.seq === null
        ? this.index
        : Number(committed.seq) + this.count;
    this.startedAt = this.clock.now();
  }

  private partition() {
    return { task: this.index, tasks: this.count };
  }

  async poll(): Promise<SourceRecord[] | null> {
    if (this.stopped) return null;
    const now = this.clock.now();
    let n = Math.min(this.batchSize, this.allowedAt(now));
    if (this.iterations >= 0) {
      const left = Math.max(0, Math.ceil((this.iterations - this.next) / this.count));
      n = Math.min(n, left);
      if (left === 0) {
        // Done: idle politely until stopped.
        await this.wakeup.wait(MAX_WAIT_MS);
        return null;
      }
    }
    if (n <= 0) {
      // The next record is due once elapsed * rate reaches the count produced.
      const untilNext = this.produced / this.ratePerMs - (now - this.startedAt);
      await this.wakeup.wait(Math.min(MAX_WAIT_MS, Math.max(1, Math.ceil(untilNext))));
      return null;
    }
    const records: SourceRecord[] = new Array(n);
    const partition = this.partition();
    for (let i = 0; i < n; i++) {
      const seq = this.next;
      records[i] = {
        topic: this.topic,
        sourcePartition: partition,
        sourceOffset: { seq },
        keySchema: KEY_SCHEMA,
        key: keyFor(seq, this.cardinality),
        valueSchema: VALUE_SCHEMA,
        value: valueFor(seq, now, this.payload),
        timestamp: now,
      };
      this.next += this.count;
    }
    this.produced += n;
    return records;
  }

  /** How many more records the rate allows at `now`. */
  private allowedAt(now: number): number {
    if (this.ratePerMs === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
    return Math.floor(1 + (now - this.startedAt) * this.ratePerMs) - this.produced;
  }

  stop(): void {
    this.stopped = true;
    this.wakeup.wake();
  }
}

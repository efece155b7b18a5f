/**
 * The Parquet sink's SinkTask: adapts the runtime's calls to ParquetSinkWriter.
 *
 *   start     parse the config, open the store and check it (a missing bucket or
 *             refused credentials fail the task here, with S3's message)
 *   open      recover each assigned partition from the store and seek there
 *             (context.offset), so consumption resumes after the last durable file
 *   put       buffer and rotate; closed files are encoded and uploaded in the
 *             background. An empty put (the runner's call when no records came) closes
 *             groups whose rotate.schedule.interval.ms boundary passed. A transient
 *             store failure is a RetriableException from the next put (the runner
 *             redelivers the batch after retry.backoff.ms, which the writer
 *             de-duplicates by offset), a
 *             permanent one fails the task. A record that cannot be written fails it
 *             too, or with errors.tolerance=all goes to the errant record reporter
 *             (the dead letter queue) and is skipped
 *   preCommit commit only offsets whose records are in durable files (it does not
 *             wait for uploads in flight: each one that completes requests a commit)
 *   close     wait for the revoked partitions' uploads in flight, then drop their
 *             buffers (their new owner replays what was not durable)
 * Every call comes from the task's runner, one at a time (sink-task.ts).
 */
import {
  ConnectException,
  errorKind,
  parseConfig,
  type SinkRecord,
  type SinkTask,
  type SinkTaskContext,
  type TaskConfig,
  type TopicPartition,
  type TopicPartitionOffset,
  topicPartitionKey,
} from '../../src/connect/api/index.ts';
import { parquetSinkConfigDefs, toSinkConfig, validateSinkConfig } from './config.ts';
import { StoreError } from './object-store.ts';
import { registerSinkMetrics } from './sink-metrics.ts';
import { ParquetSinkWriter } from './sink-writer.ts';
import { createStore } from './store-factory.ts';
import { PARQUET_SINK_VERSION } from './version.ts';

export class ParquetSinkTask implements SinkTask {
  private writer: ParquetSinkWriter | undefined;
  private context: SinkTaskContext | undefined;
  private retryBackoffMs = 0;

  version(): string {
    return PARQUET_SINK_VERSION;
  }

  async start(config: TaskConfig, context: SinkTaskContext): Promise<void> {
    const parsed = parseConfig(parquetSinkConfigDefs, config);
    const errors = parsed.errors.length > 0 ? parsed.errors : validateSinkConfig(parsed.values);
    if (errors.length > 0) {
      throw new ConnectException(errors.map((e) => `${e.key}: ${e.message}`).join('; '));
    }
    const settings = toSinkConfig(parsed.values, config);
    this.retryBackoffMs = settings.retryBackoffMs;
    const store = createStore(settings.store);
    try {
      await store.check();
    } catch (e) {
      await store.close();
      const message = e instanceof StoreError ? e.message : String(e);
      throw new ConnectException(`Parquet sink cannot use ${store.description}: ${message}`, {
        cause: e,
      });
    }
    this.context = context;
    // With errors.tolerance=all the runner offers an errant record reporter: records
    // the sink cannot write then go to the dead letter queue instead of failing it.
    const report = context.errantRecordReporter;
    this.writer = new ParquetSinkWriter(settings, store, context.clock, {
      // A file made durable in the background makes its offsets committable: ask for
      // the commit then rather than at the next offset.flush.interval.ms.
      onDurable: () => context.requestCommit(),
      ...(report ? { reportErrant: report } : {}),
    });
    // Read at scrape time from the writer; stop() drops it, and the series go with the task.
    registerSinkMetrics(context.pluginMetrics(), () => this.writer);
  }

  async open(partitions: readonly TopicPartition[]): Promise<void> {
    const seeks = await this.started().open(partitions);
    if (seeks.length > 0) this.context?.offset(seeks);
  }

  async put(records: readonly SinkRecord[]): Promise<void> {
    try {
      await this.started().put(records);
    } catch (e) {
      // retry.backoff.ms, as Confluent's task asks: the runner waits that long before
      // handing the batch again.
      if (errorKind(e) === 'retriable') this.context?.timeout(this.retryBackoffMs);
      throw e;
    }
  }

  async preCommit(
    currentOffsets: readonly TopicPartitionOffset[],
  ): Promise<TopicPartitionOffset[]> {
    const writer = this.started();
    try {
      await writer.retryFailedUploads();
    } catch (e) {
      // A transient store failure: the files stay queued and the next put or
      // preCommit uploads them; commit what is durable meanwhile.
      if (errorKind(e) !== 'retriable') throw e;
    }
    const durable = new Map(
      writer.committableOffsets(currentOffsets).map((o) => [topicPartitionKey(o), o.offset]),
    );
    const out: TopicPartitionOffset[] = [];
    for (const current of currentOffsets) {
      const offset = durable.get(topicPartitionKey(current));
      if (offset === undefined) continue;
      out.push({ ...current, offset: Math.min(offset, current.offset) });
    }
    return out;
  }

  async close(partitions: readonly TopicPartition[]): Promise<void> {
    await this.writer?.close(partitions);
  }

  async stop(): Promise<void> {
    const writer = this.writer;
    this.writer = undefined;
    await writer?.stop();
  }

  private started(): ParquetSinkWriter {
    if (!this.writer) throw new ConnectException('Parquet sink task used before start()');
    return this.writer;
  }
}

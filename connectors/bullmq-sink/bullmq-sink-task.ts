/**
 * The BullMQ sink's SinkTask: records -> jobs, exactly once (job-writer.ts explains
 * the transaction and why replays add nothing twice).
 *
 *   start     parse the config (a bad one fails the task naming the keys) and open
 *             the task's own Redis connection in the background: a Redis that is down
 *             at start is an outage like any other, retried by put
 *   put       in chunks of batch.size: read the positions if they are not guarded
 *             (first put, after a reconnect or a conflict), drop records below them
 *             (their jobs are in Redis already), map the rest (job-mapper.ts; a record
 *             that cannot be mapped goes to the errant record reporter, i.e. the dead
 *             letter queue, before the write, or fails the task without
 *             errors.tolerance=all), then one transaction adds the jobs and moves the
 *             positions. Redis failures: RetriableException with a back-off and the
 *             outage in the RUNNING status trace, FAILED past errors.retry.timeout
 *             (redis-outage.ts)
 *   preCommit per partition, the smaller of the runner's offset and the position this
 *             task saw in Redis, never below where this assignment started: Kafka only
 *             learns offsets whose jobs are in Redis
 *   close     forget the partitions' positions (their next owner reads them)
 * Every call comes from the task's runner, one at a time (sink-task.ts).
 */
import type { Redis } from 'ioredis';
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
import {
  type BullMQSinkConfig,
  bullmqSinkConfigDefs,
  toSinkConfig,
  validateSinkConfig,
} from './config.ts';
import { type JobAction, JobMapper } from './job-mapper.ts';
import { JobWriter, type PartitionBatch } from './job-writer.ts';
import { openRedis, ready } from './redis-connection.ts';
import { outagePolicy, RedisOutage } from './redis-outage.ts';
import { describeRedis } from './redis-settings.ts';
import { registerSinkMetrics } from './sink-metrics.ts';
import { BULLMQ_SINK_VERSION } from './version.ts';

/** Conflicts in a row (another writer moving our positions) before the task gives up. */
const MAX_CONFLICTS = 5;

interface Started {
  config: BullMQSinkConfig;
  context: SinkTaskContext;
  redis: Redis;
  writer: JobWriter;
  mapper: JobMapper;
  outage: RedisOutage;
}

export class BullMQSinkTask implements SinkTask {
  private s: Started | undefined;
  /** Per partition key, the first offset put in this assignment (the consumer's start). */
  private readonly firstPut = new Map<string, number>();

  version(): string {
    return BULLMQ_SINK_VERSION;
  }

  start(taskConfig: TaskConfig, context: SinkTaskContext): void {
    const parsed = parseConfig(bullmqSinkConfigDefs, taskConfig);
    const errors =
      parsed.errors.length > 0
        ? parsed.errors
        : validateSinkConfig(parsed.values, { probe: false });
    if (errors.length > 0) {
      throw new ConnectException(errors.map((e) => `${e.key}: ${e.message}`).join('; '));
    }
    const config = toSinkConfig(parsed.values);
    const redis = openRedis(
      config.redis,
      `connect-bullmq-sink-${context.connectorName}-${context.taskId}`,
    );
    const where = describeRedis(config.redis);
    this.s = {
      config,
      context,
      redis,
      writer: new JobWriter(
        redis,
        config.prefix,
        context.connectorName,
        config.jobId.kind === 'key',
      ),
      mapper: new JobMapper(config),
      outage: new RedisOutage(
        outagePolicy(taskConfig),
        context.clock,
        where,
        (d) => context.reportTrouble(d),
        (ms) => context.timeout(ms),
      ),
    };
    registerSinkMetrics(context.pluginMetrics(), this.s.writer);
  }

  async put(records: readonly SinkRecord[]): Promise<void> {
    const s = this.started();
    if (records.length === 0) return;
    for (const r of records) {
      const key = topicPartitionKey({ topic: r.topic, partition: r.kafkaPartition });
      if (!this.firstPut.has(key)) this.firstPut.set(key, r.kafkaOffset);
    }
    for (let i = 0; i < records.length; i += s.config.batchSize) {
      const chunk =
        i === 0 && records.length <= s.config.batchSize
          ? records
          : records.slice(i, i + s.config.batchSize);
      try {
        await this.putChunk(s, chunk);
      } catch (e) {
        // Our own verdicts (a bad record, a partly applied transaction) are final;
        // anything else came from Redis or the connection to it.
        if (e instanceof ConnectException) throw e;
        throw s.outage.failed(e);
      }
      s.outage.recovered();
    }
  }

  private async putChunk(s: Started, records: readonly SinkRecord[]): Promise<void> {
    await ready(s.redis);
    await s.writer.flushFollowUps();
    const groups = byPartition(records);
    const tps = [...groups.values()].map((g) => g.tp);
    let mapped: Map<string, Array<{ record: SinkRecord; action: JobAction }>> | undefined;
    for (let conflicts = 0; ; conflicts++) {
      if (!s.writer.isGuarded(tps)) await s.writer.readPositions(tps);
      if (mapped === undefined) mapped = await this.mapFresh(s, groups);
      const batches: PartitionBatch[] = [];
      for (const [key, g] of groups) {
        const position = s.writer.position(g.tp) ?? -1;
        const end = g.records[g.records.length - 1]!.kafkaOffset + 1;
        if (end <= position) continue;
        const fresh = mapped.get(key)!.filter((m) => m.record.kafkaOffset >= position);
        batches.push({
          tp: g.tp,
          end,
          actions: fresh.map((m) => m.action),
          offsets: fresh.map((m) => m.record.kafkaOffset),
        });
      }
      if (batches.length === 0) return;
      const outcome = await s.writer.write(batches);
      if (outcome.written) return;
      if (conflicts + 1 >= MAX_CONFLICTS) {
        throw new ConnectException(
          `BullMQ sink: the positions of ${tps.map(topicPartitionKey).join(', ')} kept changing under this task (${MAX_CONFLICTS} conflicts): another task writes the same partitions`,
        );
      }
    }
  }

  /** Map the records at or above their position; errant ones are reported, not mapped. */
  private async mapFresh(
    s: Started,
    groups: Map<string, { tp: TopicPartition; records: SinkRecord[] }>,
  ): Promise<Map<string, Array<{ record: SinkRecord; action: JobAction }>>> {
    const out = new Map<string, Array<{ record: SinkRecord; action: JobAction }>>();
    for (const [key, g] of groups) {
      const position = s.writer.position(g.tp) ?? -1;
      const list: Array<{ record: SinkRecord; action: JobAction }> = [];
      for (const record of g.records) {
        if (record.kafkaOffset < position) continue;
        let action: JobAction;
        try {
          action = s.mapper.map(record);
        } catch (e) {
          if (errorKind(e) !== 'data') throw e;
          await this.errant(s, record, e as Error);
          continue;
        }
        list.push({ record, action });
      }
      out.set(key, list);
    }
    return out;
  }

  private async errant(s: Started, record: SinkRecord, error: Error): Promise<void> {
    const report = s.context.errantRecordReporter;
    if (report === undefined) throw error;
    await report(record, error);
  }

  preCommit(currentOffsets: readonly TopicPartitionOffset[]): TopicPartitionOffset[] {
    const s = this.started();
    const out: TopicPartitionOffset[] = [];
    for (const current of currentOffsets) {
      const position = s.writer.position(current);
      const first = this.firstPut.get(topicPartitionKey(current));
      // A position below this assignment's start is older than Kafka's own commit
      // (Redis lost data): never move the committed offset back.
      if (position === undefined || first === undefined || position < first) continue;
      out.push({ ...current, offset: Math.min(current.offset, position) });
    }
    return out;
  }

  close(partitions: readonly TopicPartition[]): void {
    this.s?.writer.forget(partitions);
    for (const tp of partitions) this.firstPut.delete(topicPartitionKey(tp));
  }

  async stop(): Promise<void> {
    const s = this.s;
    this.s = undefined;
    if (s === undefined) return;
    await s.writer.close();
    try {
      if (s.redis.status === 'ready') await s.redis.quit();
      else s.redis.disconnect();
    } catch {
      s.redis.disconnect();
    }
  }

  /** Writer statistics, for tests and the benchmark. */
  get stats(): JobWriter['stats'] | undefined {
    return this.s?.writer.stats;
  }

  private started(): Started {
    if (!this.s) throw new ConnectException('BullMQ sink task used before start()');
    return this.s;
  }
}

function byPartition(
  records: readonly SinkRecord[],
): Map<string, { tp: TopicPartition; records: SinkRecord[] }> {
  const groups = new Map<string, { tp: TopicPartition; records: SinkRecord[] }>();
  for (const r of records) {
    const tp = { topic: r.topic, partition: r.kafkaPartition };
    const key = topicPartitionKey(tp);
    let g = groups.get(key);
    if (g === undefined) {
      g = { tp, records: [] };
      groups.set(key, g);
    }
    g.records.push(r);
  }
  return groups;
}

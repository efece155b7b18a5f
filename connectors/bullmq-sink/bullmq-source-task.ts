/**
 * The BullMQ source's SourceTask: reads a queue's events stream with XREAD from the
 * entry after the last one whose record was committed, and returns completed and
 * failed job events as records keyed by job id (job-event-record.ts).
 *
 *   start   parse the config; resume after the stored `stream_id` (none stored: from
 *           the oldest entry Redis still keeps); open the task's own connection in
 *           the background (one reader per stream: the connector runs one task)
 *   poll    one round trip reads XINFO STREAM and up to batch.size entries after the
 *           position; with none, one blocking XREAD of at most POLL_BLOCK_MS. Entries
 *           of other events advance the position without a record
 *   stop    ends a blocking read at once by closing the connection
 * Never silent about loss: BullMQ trims the stream (streams.events.maxLen, 10 000 by
 * default); when the stored position itself was trimmed (XINFO's first entry is
 * newer), events after it may have gone unread: the task fails, naming both ids. Redis failures follow errors.retry.timeout as in the sink
 * (redis-outage.ts), with the outage in the RUNNING status trace.
 * Delivery: at least once. A graceful restart resumes exactly after the last record
 * whose offset was flushed; a crash re-sends events after the last flushed offset.
 */
import type { Redis } from 'ioredis';
import {
  ConnectException,
  parseConfig,
  type SourcePartition,
  type SourceRecord,
  type SourceTask,
  type SourceTaskContext,
  type TaskConfig,
  Wakeup,
} from '../../src/connect/api/index.ts';
import { compareStreamIds, entryFields, jobEventRecord } from './job-event-record.ts';
import { openRedis, ready } from './redis-connection.ts';
import { outagePolicy, RedisOutage } from './redis-outage.ts';
import { describeRedis } from './redis-settings.ts';
import {
  type BullMQSourceConfig,
  bullmqSourceConfigDefs,
  toSourceConfig,
  validateSourceConfig,
} from './source-config.ts';
import { BULLMQ_SINK_VERSION } from './version.ts';

/** Longest blocking read: poll must settle within about a second when idle. */
const POLL_BLOCK_MS = 500;

type StreamRead = Array<[string, Array<[string, string[]]>]> | null;

export class BullMQSourceTask implements SourceTask {
  private config: BullMQSourceConfig | undefined;
  private redis: Redis | undefined;
  private outage: RedisOutage | undefined;
  private partition: SourcePartition = {};
  private streamKey = '';
  /** The id of the last entry read; '0' reads from the oldest kept entry. */
  private position = '0';
  private stopped = false;
  private readonly wakeup = new Wakeup();

  version(): string {
    return BULLMQ_SINK_VERSION;
  }

  async start(taskConfig: TaskConfig, context: SourceTaskContext): Promise<void> {
    const parsed = parseConfig(bullmqSourceConfigDefs, taskConfig);
    const errors =
      parsed.errors.length > 0
        ? parsed.errors
        : validateSourceConfig(parsed.values, { probe: false });
    if (errors.length > 0) {
      throw new ConnectException(errors.map((e) => `${e.key}: ${e.message}`).join('; '));
    }
    const config = toSourceConfig(parsed.values);
    this.config = config;
    this.partition = { prefix: config.prefix, queue: config.queue };
    this.streamKey = `${config.prefix}:${config.queue}:events`;
    const stored = await context.offsetStorageReader.offset(this.partition);
    if (typeof stored?.stream_id === 'string') this.position = stored.stream_id;
    const redis = openRedis(
      config.redis,
      `connect-bullmq-source-${context.connectorName}-${context.taskId}`,
    );
    this.redis = redis;
    this.outage = new RedisOutage(
      outagePolicy(taskConfig),
      context.clock,
      describeRedis(config.redis),
      (d) => context.reportTrouble(d),
      // The source runner backs off on its own after a RetriableException.
      () => {},
    );
  }

  async poll(): Promise<SourceRecord[] | null> {
    const redis = this.redis;
    const outage = this.outage;
    if (this.stopped || redis === undefined || outage === undefined) return null;
    try {
      await ready(redis);
      const records = await this.read(redis);
      outage.recovered();
      return records;
    } catch (e) {
      if (this.stopped) return null;
      if (e instanceof ConnectException) throw e;
      throw outage.failed(e);
    }
  }

  private async read(redis: Redis): Promise<SourceRecord[] | null> {
    const count = this.config!.batchSize;
    const [info, read] = (await redis
      .pipeline()
      .xinfo('STREAM', this.streamKey)
      .xread('COUNT', count, 'STREAMS', this.streamKey, this.position)
      .exec()) as [[Error | null, unknown], [Error | null, StreamRead]];
    if (info[0]) {
      // No stream yet: the queue has had no events. Wait as a blocking read would.
      if (/no such key/i.test(info[0].message)) {
        await this.wakeup.wait(POLL_BLOCK_MS);
        return null;
      }
      throw info[0];
    }
    this.checkNothingTrimmed(info[1] as unknown[]);
    if (read[0]) throw read[0];
    let entries = read[1]?.[0]?.[1] ?? [];
    if (entries.length === 0) {
      const blocked = (await redis.xread(
        'COUNT',
        count,
        'BLOCK',
        POLL_BLOCK_MS,
        'STREAMS',
        this.streamKey,
        this.position,
      )) as StreamRead;
      entries = blocked?.[0]?.[1] ?? [];
    }
    if (entries.length === 0) return null;
    const c = this.config!;
    const records: SourceRecord[] = [];
    for (const [id, flat] of entries) {
      const fields = entryFields(flat);
      const event = fields.get('event');
      if (event !== undefined && c.events.has(event)) {
        records.push(jobEventRecord(c.topic, c.queue, this.partition, id, fields));
      }
    }
    this.position = entries[entries.length - 1]![0];
    return records;
  }

  /**
   * Fail when the position itself was trimmed (see the header). Redis keeps no count
   * of trimmed entries per id, so this cannot tell whether entries after the position
   * went too; it fails once the reader is so far behind that the trim reached it, when
   * loss is certain or imminent, rather than miss a loss.
   */
  private checkNothingTrimmed(info: unknown[]): void {
    if (this.position === '0') return;
    const at = info.indexOf('first-entry');
    const first = at >= 0 ? (info[at + 1] as [string, unknown] | null) : null;
    if (first === null || compareStreamIds(first[0], this.position) <= 0) return;
    throw new ConnectException(
      `BullMQ source: ${this.streamKey} was trimmed past the stored position ${this.position} (its oldest entry is ${first[0]}), so events after the position may have been deleted before they were read; raise the queue's streams.events.maxLen, or reset the connector's offsets to go on from the oldest kept entry`,
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeup.wake();
    const redis = this.redis;
    this.redis = undefined;
    // disconnect, not quit: a blocking XREAD in progress must end now.
    redis?.disconnect();
  }
}

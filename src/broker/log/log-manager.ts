/**
 * All partition logs of the broker under one data directory, the topics they belong
 * to, and the background work on them.
 *
 * Layout of `<dataDir>`:
 *   topics/<topic>.json           topic id, partition count, config overrides
 *                                 (topic-metadata.ts: the commit point of changes)
 *   <topic>-<partition>/          one PartitionLog each (partition-log.ts)
 * A partition directory that no topic metadata claims is the leftover of a create
 * or delete interrupted by a crash, and is deleted on open.
 *
 * Topic admin (CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs and
 * IncrementalAlterConfigs) validates names, counts and configs (topicConfigDefs,
 * unknown keys rejected) and throws LogError with the Kafka error to return:
 * INVALID_TOPIC_EXCEPTION, TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS, INVALID_CONFIG
 * (naming the key), UNKNOWN_TOPIC_OR_PARTITION. Effective configs are the topic's
 * overrides over the broker's `log.*` values (effectiveTopicConfig).
 *
 * Background work (retention, compaction, flush.ms, recovery checkpoints) runs in one
 * LogScheduler with the injected clock; `close()` stops it, waits for it, and closes
 * every log cleanly (so the next open scans nothing).
 *
 * Runs on the broker thread like everything in this folder; admin calls are
 * synchronous except where they wait for logs to flush or close.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatConfigError, parseConfig } from '../../config/config-def.ts';
import type { Clock } from '../../util/clock.ts';
import { getLogger, type Logger } from '../../util/logger.ts';
import { LogError } from './errors.ts';
import { LogCleaner } from './log-cleaner.ts';
import { LogScheduler } from './log-scheduler.ts';
import { PartitionLog } from './partition-log.ts';
import { effectiveTopicConfig, type TopicConfig, topicConfigDefs } from './topic-config.ts';
import { type TopicMetadata, TopicMetadataStore } from './topic-metadata.ts';
import { validateTopicName } from './topic-name.ts';

/** More partitions than this in one topic is almost surely a typo, and a file-handle bomb. */
export const MAX_PARTITIONS = 10_000;

export interface LogManagerOptions {
  dataDir: string;
  /** Parsed broker-level values keyed by Kafka's names (`log.retention.ms`, ...). */
  brokerConfig: Record<string, unknown>;
  clock: Clock;
  logger?: Logger;
  /** Background task periods, Kafka's defaults unless given. */
  retentionCheckIntervalMs?: number;
  cleanerBackoffMs?: number;
  flushCheckIntervalMs?: number;
  checkpointIntervalMs?: number;
  cleanerEnabled?: boolean;
  /** Keys per cleaning (the cleaner's offset map size). */
  cleanerOffsetMapEntries?: number;
  /** A partition's last stable offset, which the cleaner never cleans past. Default: the log end. */
  lastStableOffset?: (log: PartitionLog) => number;
}

export interface TopicDescription {
  name: string;
  topicId: string;
  partitions: number;
  /** The topic's own overrides, as given. */
  configs: Record<string, string>;
}

export type AlterOp =
  | { key: string; op: 'SET'; value: string }
  | { key: string; op: 'DELETE' }
  | { key: string; op: 'APPEND' | 'SUBTRACT'; value: string };

interface Topic {
  meta: TopicMetadata;
  config: TopicConfig;
  logs: PartitionLog[];
}

const PARTITION_DIR = /^(.+)-(\d+)$/;

export class LogManager {
  private readonly topicsByName = new Map<string, Topic>();
  /** Topic id to name, beside topicsByName (Fetch v13+ names topics by id on every request). */
  private readonly namesById = new Map<string, string>();
  private readonly store: TopicMetadataStore;
  private readonly logger: Logger;
  readonly cleaner: LogCleaner;
  readonly scheduler: LogScheduler;
  private closed = false;

  private constructor(private readonly options: LogManagerOptions) {
    this.logger = options.logger ?? getLogger('broker.log.manager');
    this.store = new TopicMetadataStore(options.dataDir);
    this.cleaner = new LogCleaner({
      clock: options.clock,
      offsetMapEntries: options.cleanerOffsetMapEntries,
      lastStableOffset: options.lastStableOffset,
    });
    this.scheduler = new LogScheduler(options.clock, [
      {
        name: 'retention',
        intervalMs: options.retentionCheckIntervalMs ?? 300_000,
        run: () => {
          for (const log of this.allLogs()) log.deleteOldSegments();
        },
      },
      {
        name: 'cleaner',
        intervalMs: options.cleanerBackoffMs ?? 15_000,
        run: () =>
          options.cleanerEnabled === false ? undefined : this.cleaner.cleanOnce(this.allLogs()),
      },
      {
        name: 'flush',
        intervalMs: options.flushCheckIntervalMs ?? 1_000,
        run: () => Promise.all([...this.allLogs()].map((log) => log.flushIfDue())),
      },
      {
        name: 'checkpoint',
        intervalMs: options.checkpointIntervalMs ?? 60_000,
        run: () => {
          for (const log of this.allLogs()) log.writeCheckpoint();
        },
      },
    ]);
  }

  /** Opens every topic and partition under dataDir (recovering them) and starts background work. */
  static open(options: LogManagerOptions): LogManager {
    mkdirSync(options.dataDir, { recursive: true });
    const manager = new LogManager(options);
    const metas = manager.store.loadAll();
    const claimed = new Set<string>();
    for (const meta of metas) {
      const config = manager.configFor(meta.configs);
      const logs: PartitionLog[] = [];
      for (let p = 0; p < meta.partitions; p++) {
        claimed.add(`${meta.name}-${p}`);
        logs.push(manager.openLog(meta.name, p, config));
      }
      manager.topicsByName.set(meta.name, { meta, config, logs });
      manager.namesById.set(meta.topicId, meta.name);
    }
    for (const entry of readdirSync(options.dataDir, { withFileTypes: true })) {
      if (!entry.isDirectory() || !PARTITION_DIR.test(entry.name) || claimed.has(entry.name))
        continue;
      manager.logger.warn({ dir: entry.name }, 'deleting a partition directory no topic claims');
      rmSync(join(options.dataDir, entry.name), { recursive: true, force: true });
    }
    return manager;
  }

  /** Starts the background scheduler (the broker does; tests may drive `scheduler.runDue()`). */
  startBackgroundWork(): void {
    this.scheduler.start();
  }

  private openLog(topic: string, partition: number, config: TopicConfig): PartitionLog {
    const log = PartitionLog.open({
      dir: join(this.options.dataDir, `${topic}-${partition}`),
      topic,
      partition,
      config,
      clock: this.options.clock,
    });
    if (log.recoveryInfo.truncatedBytes > 0 || log.recoveryInfo.scannedSegments > 0) {
      this.logger.info({ topic, partition, ...log.recoveryInfo }, 'recovered partition log');
    }
    return log;
  }

  private *allLogs(): Generator<PartitionLog> {
    for (const t of this.topicsByName.values()) yield* t.logs;
  }

  /** Parses and validates overrides; INVALID_CONFIG names the first bad key. */
  private configFor(overrides: Record<string, string>): TopicConfig {
    const parsed = parseConfig(topicConfigDefs, overrides);
    if (parsed.unknown.length > 0) {
      throw new LogError('INVALID_CONFIG', `Unknown topic config name: ${parsed.unknown[0]}`);
    }
    const bad = parsed.errors.find((e) => Object.hasOwn(overrides, e.key));
    if (bad) throw new LogError('INVALID_CONFIG', formatConfigError(bad));
    const typed: Record<string, unknown> = {};
    for (const key of Object.keys(overrides)) typed[key] = parsed.values[key];
    return effectiveTopicConfig(typed, this.options.brokerConfig);
  }

  /** The folder every partition's directory is in (DescribeLogDirs answers it). */
  get dataDir(): string {
    return resolve(this.options.dataDir);
  }

  topics(): TopicDescription[] {
    return [...this.topicsByName.values()].map((t) => describe(t.meta));
  }

  topic(name: string): TopicDescription | undefined {
    const t = this.topicsByName.get(name);
    return t && describe(t.meta);
  }

  /** The topic with this id (Metadata v12, DeleteTopics v6 and Fetch by id); undefined if none. */
  topicById(topicId: string): TopicDescription | undefined {
    const name = this.namesById.get(topicId);
    return name === undefined ? undefined : this.topic(name);
  }

  /** The topic's effective config (overrides over broker values over defaults). */
  effectiveConfig(name: string): TopicConfig {
    return this.requireTopic(name).config;
  }

  /** The log of a partition; UNKNOWN_TOPIC_OR_PARTITION when there is none. */
  getLog(topic: string, partition: number): PartitionLog {
    const log = this.topicsByName.get(topic)?.logs[partition];
    if (!log) {
      throw new LogError(
        'UNKNOWN_TOPIC_OR_PARTITION',
        `This server does not host ${topic}-${partition}`,
      );
    }
    return log;
  }

  private requireTopic(name: string): Topic {
    const t = this.topicsByName.get(name);
    if (!t) throw new LogError('UNKNOWN_TOPIC_OR_PARTITION', `Topic ${name} does not exist`);
    return t;
  }

  createTopic(
    name: string,
    partitions: number,
    configs: Record<string, string> = {},
    options: { validateOnly?: boolean } = {},
  ): TopicDescription {
    validateTopicName(name);
    if (this.topicsByName.has(name)) {
      throw new LogError('TOPIC_ALREADY_EXISTS', `Topic '${name}' already exists.`);
    }
    validatePartitionCount(partitions);
    const config = this.configFor(configs);
    const meta: TopicMetadata = {
      name,
      topicId: randomUUID(),
      partitions,
      configs: { ...configs },
    };
    if (options.validateOnly) return describe(meta);
    const logs: PartitionLog[] = [];
    for (let p = 0; p < partitions; p++) {
      const dir = join(this.options.dataDir, `${name}-${p}`);
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
      logs.push(this.openLog(name, p, config));
    }
    this.store.save(meta);
    this.topicsByName.set(name, { meta, config, logs });
    this.namesById.set(meta.topicId, name);
    return describe(meta);
  }

  async deleteTopic(name: string): Promise<void> {
    const t = this.requireTopic(name);
    this.store.remove(name);
    this.topicsByName.delete(name);
    this.namesById.delete(t.meta.topicId);
    for (const log of t.logs) {
      await log.deleteAll();
      rmSync(log.dir, { recursive: true, force: true });
    }
  }

  /** Raises the partition count to `total` (Kafka never lowers it). */
  createPartitions(name: string, total: number, options: { validateOnly?: boolean } = {}): void {
    const t = this.requireTopic(name);
    if (!Number.isInteger(total) || total <= t.meta.partitions) {
      throw new LogError(
        'INVALID_PARTITIONS',
        `Topic currently has ${t.meta.partitions} partitions, ${total} would not be an increase.`,
      );
    }
    validatePartitionCount(total);
    if (options.validateOnly) return;
    for (let p = t.meta.partitions; p < total; p++) t.logs.push(this.openLog(name, p, t.config));
    t.meta = { ...t.meta, partitions: total };
    this.store.save(t.meta);
  }

  /** AlterConfigs: the topic's overrides become exactly `configs`. */
  alterConfigs(
    name: string,
    configs: Record<string, string>,
    options: { validateOnly?: boolean } = {},
  ): void {
    const t = this.requireTopic(name);
    const config = this.configFor(configs);
    if (options.validateOnly) return;
    this.applyConfig(t, { ...configs }, config);
  }

  /** IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on the overrides. */
  incrementalAlterConfigs(
    name: string,
    ops: AlterOp[],
    options: { validateOnly?: boolean } = {},
  ): void {
    const t = this.requireTopic(name);
    const next = { ...t.meta.configs };
    for (const op of ops) {
      if (op.op === 'SET') next[op.key] = op.value;
      else if (op.op === 'DELETE') delete next[op.key];
      else {
        const def = topicConfigDefs.find((d) => d.name === op.key);
        if (def?.type !== 'list') {
          throw new LogError(
            'INVALID_CONFIG',
            `Config value append/subtract is not allowed for config key ${op.key}`,
          );
        }
        const current = (next[op.key] ?? (def.default as string[]).join(','))
          .split(',')
          .map((v) => v.trim())
          .filter((v) => v !== '');
        const values = op.value.split(',').map((v) => v.trim());
        const result =
          op.op === 'APPEND'
            ? [...current, ...values.filter((v) => !current.includes(v))]
            : current.filter((v) => !values.includes(v));
        next[op.key] = result.join(',');
      }
    }
    const config = this.configFor(next);
    if (options.validateOnly) return;
    this.applyConfig(t, next, config);
  }

  private applyConfig(t: Topic, configs: Record<string, string>, config: TopicConfig): void {
    t.meta = { ...t.meta, configs };
    t.config = config;
    this.store.save(t.meta);
    for (const log of t.logs) log.config = config;
  }

  /** Stops background work and closes every log cleanly. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.scheduler.stop();
    await Promise.all([...this.allLogs()].map((log) => log.close()));
  }
}

function describe(meta: TopicMetadata): TopicDescription {
  return {
    name: meta.name,
    topicId: meta.topicId,
    partitions: meta.partitions,
    configs: { ...meta.configs },
  };
}

function validatePartitionCount(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > MAX_PARTITIONS) {
    throw new LogError(
      'INVALID_PARTITIONS',
      `Number of partitions must be between 1 and ${MAX_PARTITIONS}, got ${n}.`,
    );
  }
}

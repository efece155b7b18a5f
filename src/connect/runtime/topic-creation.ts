/**
 * KIP-158 topic creation for source connectors. When the worker allows it
 * (topic.creation.enable) and the connector sets `topic.creation.default.replication.factor`
 * and `topic.creation.default.partitions`, each topic the task produces to is created
 * (if missing) before its first record is sent, with the settings of the first group
 * that matches it: the groups of `topic.creation.groups` in order, `default` last
 * (it includes every topic). A group's `include`/`exclude` are regular expression
 * lists matched against the whole topic name; its `replication.factor` and
 * `partitions` fall back to default's; every other `topic.creation.<group>.<key>` is a
 * topic config (cleanup.policy, retention.ms, ...). -1 means the broker's default.
 *
 * A task may name topic configs of its own for a topic (SourceTaskContext
 * .topicCreationOverride, kept by `override`): they are merged over the matched
 * group's configs when the topic is created, e.g. `cleanup.policy=delete` for a topic
 * of records without keys in a connector whose topics are compacted by default. They
 * must come before the topic's first record: what applies is fixed when `ensure` first
 * looks at the topic.
 *
 * Each topic is checked once per task (the result is cached); an existing topic is
 * left as it is, as Kafka Connect does, overrides included. One instance per task,
 * used from the worker's event loop.
 */
import type { Admin } from 'kafkajs';
import { ConnectException } from '../api/errors.ts';
import { listValue, withPrefix } from './plugin-config.ts';

interface Group {
  name: string;
  include: RegExp[];
  exclude: RegExp[];
  replicationFactor: number;
  partitions: number;
  configs: Record<string, string>;
}

const GROUP_KEYS = ['include', 'exclude', 'replication.factor', 'partitions'];

function whole(pattern: string): RegExp {
  return new RegExp(`^(?:${pattern})$`);
}

export class TopicCreation {
  private readonly known = new Set<string>();
  private inFlight = new Map<string, Promise<void>>();
  private readonly overrides = new Map<string, Readonly<Record<string, string>>>();

  private constructor(private readonly groups: readonly Group[]) {}

  /** Null when topic creation is off for this connector. */
  static fromConfig(
    workerEnabled: boolean,
    config: Readonly<Record<string, string>>,
  ): TopicCreation | null {
    if (!workerEnabled) return null;
    const rf = config['topic.creation.default.replication.factor'];
    const partitions = config['topic.creation.default.partitions'];
    if (rf === undefined || partitions === undefined) return null;
    const number = (key: string, raw: string | undefined, fallback: number): number => {
      if (raw === undefined || raw.trim() === '') return fallback;
      const n = Number(raw);
      if (!Number.isInteger(n) || (n !== -1 && n < 1)) {
        throw new ConnectException(
          `Invalid value ${raw} for configuration ${key}: Value must be -1 or at least 1`,
        );
      }
      return n;
    };
    const defaultRf = number('topic.creation.default.replication.factor', rf, -1);
    const defaultPartitions = number('topic.creation.default.partitions', partitions, -1);
    const names = [
      ...listValue(config['topic.creation.groups']).filter((g) => g !== 'default'),
      'default',
    ];
    const groups = names.map((name): Group => {
      const prefix = `topic.creation.${name}.`;
      const include = listValue(config[`${prefix}include`]);
      return {
        name,
        include: (name === 'default' && include.length === 0 ? ['.*'] : include).map(whole),
        exclude: listValue(config[`${prefix}exclude`]).map(whole),
        replicationFactor: number(
          `${prefix}replication.factor`,
          config[`${prefix}replication.factor`],
          defaultRf,
        ),
        partitions: number(`${prefix}partitions`, config[`${prefix}partitions`], defaultPartitions),
        configs: withPrefix(config, prefix, GROUP_KEYS) as Record<string, string>,
      };
    });
    return new TopicCreation(groups);
  }

  /** The group whose settings apply to `topic`. */
  groupFor(topic: string): Group {
    const match = this.groups.find(
      (g) => g.include.some((r) => r.test(topic)) && !g.exclude.some((r) => r.test(topic)),
    );
    return match ?? (this.groups[this.groups.length - 1] as Group);
  }

  /**
   * The task's topic configs for `topic`, over its group's at creation; a later call
   * for the same topic replaces the earlier one. False when it comes too late: this
   * task already checked the topic (created it or found it), so it is not applied.
   */
  override(topic: string, configs: Readonly<Record<string, string>>): boolean {
    if (this.known.has(topic) || this.inFlight.has(topic)) return false;
    this.overrides.set(topic, { ...configs });
    return true;
  }

  /** The topic configs `topic` is created with: its group's, then the task's override. */
  topicConfigs(topic: string): Record<string, string> {
    return { ...this.groupFor(topic).configs, ...this.overrides.get(topic) };
  }

  /** Create `topic` if it does not exist yet (once per task). */
  ensure(topic: string, admin: Admin): Promise<void> {
    if (this.known.has(topic)) return Promise.resolve();
    let pending = this.inFlight.get(topic);
    if (pending === undefined) {
      pending = this.create(topic, admin).finally(() => this.inFlight.delete(topic));
      this.inFlight.set(topic, pending);
    }
    return pending;
  }

  private async create(topic: string, admin: Admin): Promise<void> {
    // Fixed before the first await: an override arriving meanwhile is refused, not half-applied.
    const group = this.groupFor(topic);
    const configs = this.topicConfigs(topic);
    const existing = await admin.listTopics();
    if (!existing.includes(topic)) {
      // createTopics answers false when the topic appeared meanwhile: fine either way.
      // It does not wait for leaders: kafkajs polls for them every 100 ms, which held
      // a new connector's first records back by that much, and the producer already
      // retries UNKNOWN_TOPIC_OR_PARTITION and LEADER_NOT_AVAILABLE until a leader is
      // elected.
      await admin.createTopics({
        waitForLeaders: false,
        topics: [
          {
            topic,
            numPartitions: group.partitions,
            replicationFactor: group.replicationFactor,
            configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })),
          },
        ],
      });
    }
    this.known.add(topic);
  }
}

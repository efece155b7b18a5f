/**
 * Connector, task and active-topic statuses in the status topic
 * (status.storage.topic, compacted, 5 partitions by default), in Kafka Connect's
 * layout so Java workers and tools read them:
 *
 *   status-connector-<name>               {"state": "RUNNING", "trace": null,
 *   status-task-<name>-<n>                 "worker_id": "host:port", "generation": 7}
 *   status-topic-<topic>:connector-<name> {"topic": {"name": ..., "connector": ...,
 *                                            "task": n, "discoverTimestamp": ms}}
 *
 * A null value deletes. Keys are spread over partitions by the producer's
 * partitioner (Java-compatible murmur2 in kafkajs 2), so the updates of one key
 * stay in order. Every worker reads the whole topic and keeps the latest status
 * per key.
 *
 * Generation fencing (as Connect's putSafe): a worker reporting that it stopped
 * something first reads the topic to its end, and does not write if the current
 * status was written by another worker in a newer generation: the work has moved
 * and the new owner's status stands. Plain `put` is for the current owner.
 *
 * Crash behaviour: nothing to repair; a restarted worker reads the topic again.
 * Called by the distributed herder and, through `listenerFor`, by the worker.
 */
import type { Producer } from 'kafkajs';
import type { ClusterClient } from '../../protocol/client/cluster-client.ts';
import type { Logger } from '../../util/logger.ts';
import type { ConnectorState, ConnectorTaskId } from '../herder/herder.ts';
import type { StatusListener } from '../runtime/status-listener.ts';
import { startInternalLog } from './internal-topic.ts';
import type { KafkaBasedLog, LogRecord } from './kafka-based-log.ts';
import {
  type ConnectorStatus,
  canWriteSafely,
  type StatusBackingStore,
  type TaskStatus,
  type TopicStatus,
} from './status-backing-store.ts';

export interface KafkaStatusStoreOptions {
  client: ClusterClient;
  producer: Producer;
  topic: string;
  /** status.storage.partitions (Connect's default 5). */
  partitions: number;
  replicationFactor: number;
  logger: Logger;
  /**
   * Long-poll wait of the tailing fetch (KafkaBasedLog's default when unset). A
   * broker answers one connection's requests in order, so readToEnd() can wait up
   * to this long behind the poll in flight: smaller means faster writes, more
   * idle fetches.
   */
  readMaxWaitMs?: number;
}

const CONNECTOR_PREFIX = 'status-connector-';
const TASK_PREFIX = 'status-task-';
const TOPIC_PREFIX = 'status-topic-';
const TOPIC_CONNECTOR_SEPARATOR = ':connector-';

export const connectorStatusKey = (name: string) => `${CONNECTOR_PREFIX}${name}`;
export const taskStatusKey = (id: ConnectorTaskId) => `${TASK_PREFIX}${id.connector}-${id.task}`;
export const topicStatusKey = (topic: string, connector: string) =>
  `${TOPIC_PREFIX}${topic}${TOPIC_CONNECTOR_SEPARATOR}${connector}`;

const STATES: ReadonlySet<string> = new Set([
  'UNASSIGNED',
  'RUNNING',
  'PAUSED',
  'STOPPED',
  'FAILED',
  'RESTARTING',
]);

export class KafkaStatusBackingStore implements StatusBackingStore {
  private readonly connectorStatuses = new Map<string, ConnectorStatus>();
  private readonly taskStatuses = new Map<string, Map<number, TaskStatus>>();
  private readonly topicStatuses = new Map<string, Map<string, TopicStatus>>();
  private log: KafkaBasedLog | undefined;

  constructor(private readonly options: KafkaStatusStoreOptions) {}

  async start(): Promise<void> {
    this.log = await startInternalLog(
      this.options.client,
      {
        topic: this.options.topic,
        configKey: 'status.storage.topic',
        partitions: this.options.partitions,
        replicationFactor: this.options.replicationFactor,
      },
      {
        logger: this.options.logger,
        maxWaitMs: this.options.readMaxWaitMs,
        onRecord: (r) => this.apply(r),
      },
    );
  }

  async stop(): Promise<void> {
    await this.log?.stop();
  }

  async readToEnd(): Promise<void> {
    if (!this.log) throw new Error('status store is not started');
    await this.log.readToEnd();
  }

  async put(status: ConnectorStatus): Promise<void> {
    await this.send(connectorStatusKey(status.connector), statusValue(status));
  }

  async putSafe(status: ConnectorStatus): Promise<boolean> {
    await this.readToEnd();
    if (!canWriteSafely(this.connectorStatuses.get(status.connector), status)) return false;
    await this.put(status);
    return true;
  }

  async putTask(status: TaskStatus): Promise<void> {
    await this.send(taskStatusKey(status.id), statusValue(status));
  }

  async putTaskSafe(status: TaskStatus): Promise<boolean> {
    await this.readToEnd();
    if (!canWriteSafely(this.getTask(status.id), status)) return false;
    await this.putTask(status);
    return true;
  }

  async putTopic(status: TopicStatus): Promise<void> {
    await this.send(
      topicStatusKey(status.topic, status.connector),
      JSON.stringify({
        topic: {
          name: status.topic,
          connector: status.connector,
          task: status.task,
          discoverTimestamp: status.discoverTimestamp,
        },
      }),
    );
  }

  async deleteConnector(connector: string): Promise<void> {
    await this.readToEnd();
    const keys = [
      connectorStatusKey(connector),
      ...this.getAll(connector).map((t) => taskStatusKey(t.id)),
      ...this.getTopics(connector).map((t) => topicStatusKey(t.topic, connector)),
    ];
    await this.options.producer.send({
      topic: this.options.topic,
      acks: -1,
      messages: keys.map((key) => ({ key, value: null })),
    });
  }

  async deleteTopic(connector: string, topic: string): Promise<void> {
    await this.send(topicStatusKey(topic, connector), null);
  }

  get(connector: string): ConnectorStatus | undefined {
    return this.connectorStatuses.get(connector);
  }

  getTask(id: ConnectorTaskId): TaskStatus | undefined {
    return this.taskStatuses.get(id.connector)?.get(id.task);
  }

  getAll(connector: string): TaskStatus[] {
    return [...(this.taskStatuses.get(connector)?.values() ?? [])].sort(
      (a, b) => a.id.task - b.id.task,
    );
  }

  hasTopic(connector: string, topic: string): boolean {
    return this.topicStatuses.get(connector)?.has(topic) ?? false;
  }

  getTopics(connector: string): TopicStatus[] {
    return [...(this.topicStatuses.get(connector)?.values() ?? [])].sort((a, b) =>
      a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0,
    );
  }

  connectors(): string[] {
    return [...this.connectorStatuses.keys()];
  }

  /**
   * The worker's StatusListener, stamping each state with this worker's id and the
   * generation current when it is reported. Writes are fire-and-forget for the
   * worker (its listener contract is synchronous); failures are logged. Stopped
   * states (UNASSIGNED) go through the fenced write.
   */
  listenerFor(workerId: string, generation: () => number): StatusListener {
    const report = (write: Promise<unknown>) =>
      write.catch((err) => this.options.logger.error({ err }, 'writing a status failed'));
    return {
      connectorState: (connector, state, trace) => {
        const status = {
          connector,
          state,
          trace: trace ?? null,
          workerId,
          generation: generation(),
        };
        report(state === 'UNASSIGNED' ? this.putSafe(status) : this.put(status));
      },
      taskState: (id, state, trace) => {
        const status = { id, state, trace: trace ?? null, workerId, generation: generation() };
        report(state === 'UNASSIGNED' ? this.putTaskSafe(status) : this.putTask(status));
      },
    };
  }

  private async send(key: string, value: string | null): Promise<void> {
    await this.options.producer.send({
      topic: this.options.topic,
      acks: -1,
      messages: [{ key, value }],
    });
  }

  private apply(record: LogRecord): void {
    if (record.key === null) return;
    const key = record.key.toString('utf8');
    let value: Record<string, unknown> | null = null;
    if (record.value !== null) {
      try {
        const parsed: unknown = JSON.parse(record.value.toString('utf8'));
        if (parsed === null || typeof parsed !== 'object') throw new Error('not an object');
        value = parsed as Record<string, unknown>;
      } catch (err) {
        this.options.logger.error({ key, err: String(err) }, 'skipping unreadable status record');
        return;
      }
    }
    if (key.startsWith(CONNECTOR_PREFIX))
      this.applyConnector(key.slice(CONNECTOR_PREFIX.length), value);
    else if (key.startsWith(TASK_PREFIX)) this.applyTask(key.slice(TASK_PREFIX.length), value);
    else if (key.startsWith(TOPIC_PREFIX)) this.applyTopic(key.slice(TOPIC_PREFIX.length), value);
    else this.options.logger.warn({ key }, 'discarding status record with an unknown key');
  }

  private applyConnector(connector: string, value: Record<string, unknown> | null): void {
    if (value === null) {
      this.connectorStatuses.delete(connector);
      return;
    }
    const parsed = parseStatus(value);
    if (parsed) this.connectorStatuses.set(connector, { connector, ...parsed });
    else this.options.logger.error({ connector }, 'malformed connector status; skipped');
  }

  private applyTask(rest: string, value: Record<string, unknown> | null): void {
    const dash = rest.lastIndexOf('-');
    const task = Number(rest.slice(dash + 1));
    if (dash <= 0 || !Number.isInteger(task) || task < 0) {
      this.options.logger.error({ key: TASK_PREFIX + rest }, 'malformed task status key; skipped');
      return;
    }
    const connector = rest.slice(0, dash);
    let byTask = this.taskStatuses.get(connector);
    if (value === null) {
      byTask?.delete(task);
      if (byTask?.size === 0) this.taskStatuses.delete(connector);
      return;
    }
    const parsed = parseStatus(value);
    if (!parsed) {
      this.options.logger.error({ connector, task }, 'malformed task status; skipped');
      return;
    }
    if (!byTask) {
      byTask = new Map();
      this.taskStatuses.set(connector, byTask);
    }
    byTask.set(task, { id: { connector, task }, ...parsed });
  }

  private applyTopic(rest: string, value: Record<string, unknown> | null): void {
    const at = rest.lastIndexOf(TOPIC_CONNECTOR_SEPARATOR);
    if (at <= 0) return;
    const topic = rest.slice(0, at);
    const connector = rest.slice(at + TOPIC_CONNECTOR_SEPARATOR.length);
    let byTopic = this.topicStatuses.get(connector);
    if (value === null) {
      byTopic?.delete(topic);
      if (byTopic?.size === 0) this.topicStatuses.delete(connector);
      return;
    }
    const t = value.topic as Record<string, unknown> | undefined;
    if (!t || typeof t !== 'object') return;
    if (!byTopic) {
      byTopic = new Map();
      this.topicStatuses.set(connector, byTopic);
    }
    byTopic.set(topic, {
      topic,
      connector,
      task: typeof t.task === 'number' ? t.task : 0,
      discoverTimestamp: typeof t.discoverTimestamp === 'number' ? t.discoverTimestamp : 0,
    });
  }
}

function statusValue(s: {
  state: ConnectorState;
  trace: string | null;
  workerId: string;
  generation: number;
}): string {
  return JSON.stringify({
    state: s.state,
    trace: s.trace,
    worker_id: s.workerId,
    generation: s.generation,
  });
}

function parseStatus(
  value: Record<string, unknown>,
):
  | { state: ConnectorState; trace: string | null; workerId: string; generation: number }
  | undefined {
  const { state, trace, worker_id: workerId, generation } = value;
  if (typeof state !== 'string' || !STATES.has(state) || typeof workerId !== 'string')
    return undefined;
  return {
    state: state as ConnectorState,
    trace: typeof trace === 'string' ? trace : null,
    workerId,
    generation: typeof generation === 'number' ? generation : 0,
  };
}

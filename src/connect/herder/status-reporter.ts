/**
 * The Worker's StatusListener in distributed mode: every state the Worker reports is
 * written to the status topic stamped with this worker's id and the group generation
 * current at that moment (KafkaStatusBackingStore's fencing needs both).
 *
 * Why not the store's own `listenerFor`: the Worker's listener contract is synchronous,
 * so the writes run in the background, and the herder must be able to wait for them.
 * Before a worker gives work up (revocation, clean stop) it awaits `flush()`, so the
 * UNASSIGNED it reported is in the topic before the leader checks whether the work was
 * released (a stopped item may then move at once instead of after the scheduled delay).
 *
 * Writes of one key are made in the order reported. Stopped and failed states
 * (UNASSIGNED, FAILED) use the fenced write: if a newer generation already gave the
 * item to another worker, that worker's status stands. A worker that was frozen and
 * lost its work reports FAILED for a task it no longer owns (an exactly-once task is
 * fenced when it tries to commit): without the fence, that FAILED, and the UNASSIGNED
 * after it, hid the new owner's RUNNING until the task moved again. Active topics (KIP-558) are
 * written once per connector and topic when topic tracking is on.
 */
import type { Logger } from '../../util/logger.ts';
import type { StatusListener } from '../runtime/status-listener.ts';
import type { StatusBackingStore } from '../storage/status-backing-store.ts';
import type { ConnectorState, ConnectorTaskId } from './herder.ts';

export interface StatusReporterOptions {
  store: StatusBackingStore;
  /** This worker's id (`host:port` of its REST API), as Kafka Connect names workers. */
  workerId: () => string;
  generation: () => number;
  topicTracking: boolean;
  logger: Logger;
}

/** States a worker reports as it gives work up or loses it: written only where still its own. */
function fenced(state: ConnectorState): boolean {
  return state === 'UNASSIGNED' || state === 'FAILED';
}

export class StatusReporter implements StatusListener {
  private readonly pending = new Set<Promise<unknown>>();
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Topic writes in flight, so one burst of records writes a topic once. */
  private readonly writingTopics = new Set<string>();

  constructor(private readonly o: StatusReporterOptions) {}

  connectorState(connector: string, state: ConnectorState, trace?: string): void {
    const status = {
      connector,
      state,
      trace: trace ?? null,
      workerId: this.o.workerId(),
      generation: this.o.generation(),
    };
    this.track(`connector:${connector}`, () =>
      fenced(state) ? this.o.store.putSafe(status) : this.o.store.put(status),
    );
  }

  taskState(id: ConnectorTaskId, state: ConnectorState, trace?: string): void {
    const status = {
      id,
      state,
      trace: trace ?? null,
      workerId: this.o.workerId(),
      generation: this.o.generation(),
    };
    this.track(`task:${id.connector}-${id.task}`, () =>
      fenced(state) ? this.o.store.putTaskSafe(status) : this.o.store.putTask(status),
    );
  }

  /**
   * Called for every batch a task moves; written when the status store (which follows
   * the status topic on every worker) does not hold the topic, so a topics/reset made on
   * any worker is followed by a new record as soon as the topic is used again.
   */
  topicUsed(connector: string, topic: string): void {
    if (!this.o.topicTracking) return;
    const key = `${connector}\u0000${topic}`;
    if (this.writingTopics.has(key)) return;
    if (this.o.store.hasTopic(connector, topic)) return;
    this.writingTopics.add(key);
    this.track(`topic:${connector}:${topic}`, () =>
      this.o.store
        .putTopic({ topic, connector, task: 0, discoverTimestamp: Date.now() })
        .finally(() => this.writingTopics.delete(key)),
    );
  }

  /** Writes an UNASSIGNED status now (fenced) for work this worker just stopped. */
  unassigned(work: { connectors: readonly string[]; tasks: readonly ConnectorTaskId[] }): void {
    for (const c of work.connectors) this.connectorState(c, 'UNASSIGNED');
    for (const t of work.tasks) this.taskState(t, 'UNASSIGNED');
  }

  /** Resolves once every status reported so far has been written (or failed and been logged). */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /**
   * Runs the write after the previous write of the same key: a fenced write reads the
   * topic to its end first, so without the chain an UNASSIGNED reported before a
   * RUNNING (a restart) could land after it.
   */
  private track(key: string, write: () => Promise<unknown>): void {
    const previous = this.chains.get(key) ?? Promise.resolve();
    const p = previous
      .then(write)
      .catch((err: unknown) => this.o.logger.error({ err }, 'writing a status failed'))
      .finally(() => {
        this.pending.delete(p);
        if (this.chains.get(key) === p) this.chains.delete(key);
      });
    this.chains.set(key, p);
    this.pending.add(p);
  }
}

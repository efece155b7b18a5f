/**
 * The distributed herder's side of a `connect` rebalance: the WorkerRebalanceListener
 * that worker-group-member.ts calls from its main loop (Kafka Connect's
 * DistributedHerder.RebalanceListener plus the leader's config snapshot).
 *
 *   leaderSnapshot  read the config topic at least to the highest offset any member
 *                   has read, and the status topic to its end (so `released` sees the
 *                   UNASSIGNED reports of workers that stopped cleanly); answer the
 *                   configured connectors with their committed task counts.
 *   onRevoked       stop the work, report it UNASSIGNED and wait for those writes.
 *   onAssigned      catch up on the config topic to the leader's offset, then start
 *                   the new work; wakes requests waiting for the rebalance to end.
 *   onMembershipLost  stop everything at once: the coordinator may already have
 *                   given it to others (the member calls this before the session
 *                   can have expired on the coordinator's side).
 *   released        work may move at once when its owner reported it UNASSIGNED in
 *                   the owner's latest generation.
 *
 * Callbacks run on the herder's serial loop (after any request in progress), so
 * they never overlap with a request or a config event. onAssigned launches the new
 * work's starts without waiting for them, and the stops of onRevoked are bounded
 * (task.shutdown.graceful.timeout.ms), so a hung plugin never stalls a rebalance. None of them waits for the
 * member, so the member's loop and the herder's loop cannot wait on each other.
 */
import type { Logger } from '../../util/logger.ts';
import type { Timers } from '../../util/timers.ts';
import type { WorkerRebalanceMetrics } from '../metrics/worker-metrics.ts';
import { type ConfigBackingStore, configuredWork } from '../storage/config-backing-store.ts';
import type { StatusBackingStore } from '../storage/status-backing-store.ts';
import type { AssignedWork } from './assigned-work.ts';
import type { Owner, WorkItem, WorkLoad } from './incremental-cooperative-assignor.ts';
import type { StatusReporter } from './status-reporter.ts';
import type {
  AssignmentEvent,
  LeaderSnapshot,
  WorkerRebalanceListener,
} from './worker-group-member.ts';

export interface RebalanceHandlerOptions {
  configs: ConfigBackingStore;
  status: StatusBackingStore;
  work: AssignedWork;
  reporter: StatusReporter;
  /** Runs a job on the herder's serial loop. */
  run: <T>(job: () => Promise<T>) => Promise<T>;
  /** True once the herder is stopping: nothing new is started. */
  stopping: () => boolean;
  timers: Timers;
  logger: Logger;
  /** The member left the group for good (e.g. session timeout refused by the broker). */
  onFatal?: (error: Error) => void;
  /** connect-worker-rebalance-metrics: a rebalance runs from onJoinPrepare to onAssigned. */
  metrics?: WorkerRebalanceMetrics;
}

/** `http://host:port/` -> `host:port`, the worker id Kafka Connect writes in statuses. */
export function workerIdOfUrl(url: string): string {
  return url.replace(/^\w+:\/\//, '').replace(/\/+$/, '');
}

export class RebalanceHandler implements WorkerRebalanceListener {
  /** What the leader last assigned (connector -> task count), to spot config drift. */
  private assignedWork = new Map<string, number>();
  private stable = false;
  private joined = false;
  private waiters = new Set<() => void>();

  constructor(private readonly o: RebalanceHandlerOptions) {}

  /** Whether this worker holds an assignment of the current generation. */
  get isStable(): boolean {
    return this.stable;
  }

  /** Whether this worker has applied an assignment at least once (it has started). */
  get hasJoined(): boolean {
    return this.joined;
  }

  /** True when the configured work differs from what the leader last assigned. */
  needsRebalance(): boolean {
    const now = configuredWork(this.o.configs.snapshot());
    if (now.size !== this.assignedWork.size) return true;
    for (const [name, tasks] of now) if (this.assignedWork.get(name) !== tasks) return true;
    return false;
  }

  /** Resolves when an assignment arrives, or after `timeoutMs` (false then). */
  awaitStable(timeoutMs: number): Promise<boolean> {
    if (this.stable) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        cancel();
        this.waiters.delete(wake);
        resolve(ok);
      };
      const wake = () => done(true);
      const cancel = this.o.timers.schedule(timeoutMs, () => done(false));
      this.waiters.add(wake);
    });
  }

  async leaderSnapshot(maxMemberOffset: number): Promise<LeaderSnapshot> {
    await this.o.configs.readToEnd();
    await this.o.status.readToEnd();
    const snapshot = this.o.configs.snapshot();
    if (snapshot.offset < maxMemberOffset) {
      this.o.logger.warn(
        { read: snapshot.offset, needed: maxMemberOffset },
        'config topic behind a member; assigning nothing this round',
      );
    }
    const connectors = configuredWork(snapshot);
    this.assignedWork = connectors;
    return { configOffset: snapshot.offset, connectors };
  }

  onJoinPrepare(): void {
    this.o.metrics?.rebalanceStarted();
  }

  onRevoked(work: WorkLoad): Promise<void> {
    this.stable = false;
    return this.o.run(async () => {
      await this.o.work.stop(work);
      await this.o.reporter.flush();
    });
  }

  onAssigned(event: AssignmentEvent): Promise<void> {
    return this.o.run(async () => {
      if (event.error !== 0 || this.o.configs.snapshot().offset < event.configOffset) {
        await this.o.configs.readToEnd();
      }
      if (event.error !== 0) return; // the member rejoins by itself
      if (!this.o.stopping()) await this.o.work.start(event.assigned);
      this.stable = true;
      this.joined = true;
      this.o.metrics?.rebalanceCompleted(event.generation, event.leaderUrl, event.protocol);
      for (const wake of [...this.waiters]) wake();
      this.o.logger.info(
        {
          generation: event.generation,
          leader: event.leaderUrl,
          connectors: event.allocation.connectors,
          tasks: event.allocation.tasks.map((t) => `${t.connector}-${t.task}`),
        },
        'assignment applied',
      );
    });
  }

  onMembershipLost(work: WorkLoad, reason: string): Promise<void> {
    this.stable = false;
    this.o.logger.warn({ reason }, 'stopping all work: group membership lost');
    // Stop what we run, whatever the member thinks it owned: nothing may keep running.
    return this.o.run(() => this.o.work.stop(mergeWork(work, this.o.work.running)));
  }

  released(item: WorkItem, owner: Owner): boolean {
    const s =
      item.task === undefined
        ? this.o.status.get(item.connector)
        : this.o.status.getTask({ connector: item.connector, task: item.task });
    return (
      s !== undefined &&
      s.state === 'UNASSIGNED' &&
      s.workerId === workerIdOfUrl(owner.url) &&
      s.generation >= owner.generation
    );
  }

  onFatal(error: Error): void {
    this.stable = false;
    this.o.logger.error({ err: error }, 'left the group for good; stopping all work');
    void this.o.run(() => this.o.work.stopAll());
    this.o.onFatal?.(error);
  }

  /** Called when this worker stops or leaves: requests no longer wait for an assignment. */
  markUnstable(): void {
    this.stable = false;
  }
}

function mergeWork(a: WorkLoad, b: WorkLoad): WorkLoad {
  const connectors = [...new Set([...a.connectors, ...b.connectors])];
  const seen = new Set<string>();
  const tasks = [...a.tasks, ...b.tasks].filter((t) => {
    const k = `${t.connector}-${t.task}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return { connectors, tasks };
}

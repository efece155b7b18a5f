/**
 * KeyOrderedWorker: a BullMQ Worker that runs the jobs of one record key in record
 * order, for queues the sink fills with ordering=key (key-order.ts has the format).
 * A plain Worker on such a queue runs them in any order; this one is needed.
 *
 * Per job, before the processor: one script (takeTurn) asks whether the job is the
 * head of its key's set. If it is, or the job is outside the order, the processor
 * runs. If not, the job is parked: moved back to delayed with BullMQ's own
 * moveToDelayed(timestamp, token), then DelayedError is thrown, which BullMQ counts as
 * no attempt. The wait doubles per park, from PARK_FIRST_MS to PARK_MAX_MS, and the
 * job is promoted early when its key is released, so the wait bounds only the cases
 * no release reaches (a head that was removed, a worker that died).
 *
 * When a job completes or fails for good (BullMQ set finishedOn), one script
 * (releaseKey) drops it from its set and names the next head if it is parked, which
 * is then promoted. A job that fails and is retried keeps its key: the next job waits
 * through the back-off. A release that fails (Redis gone) is reported as an 'error'
 * event, not thrown: BullMQ would otherwise complete the job again; the finished head
 * is dropped by the next look of its key.
 *
 * Lost wake-ups: a job parks in two round trips (its look, then moveToDelayed), and a
 * release between them finds it still active and promotes nothing. So after parking
 * the job looks once more; Redis orders the commands, so either the release saw the
 * job delayed, or this look sees the release, and the job promotes itself.
 *
 * Refused options (they would count parks as tries): maxStartedAttempts. Refused
 * connections: Redis Cluster (the scripts read keys they cannot declare). Parks do
 * count towards a `limiter` and appear in the queue's event stream (delayed, waiting).
 * Called by BullMQ's own loop; nothing here runs outside a job's processing.
 */
import {
  DelayedError,
  type Job,
  type Processor,
  type RedisClient,
  Worker,
  type WorkerOptions,
} from 'bullmq';
import { RELEASE_KEY_LUA, TAKE_TURN_LUA } from './key-order.ts';

/** The first park: about one Redis round trip plus a short job of the head. */
export const PARK_FIRST_MS = 100;
/** The longest park: how late a key noticed without a release (a removed head) runs on. */
export const PARK_MAX_MS = 5000;

/** How long a job waits after its `parks`-th park (1-based). */
export function parkDelayMs(parks: number): number {
  return Math.min(PARK_FIRST_MS * 2 ** Math.max(0, parks - 1), PARK_MAX_MS);
}

const TAKE_TURN = 'connectKeyOrderTakeTurn';
const RELEASE_KEY = 'connectKeyOrderRelease';
/** BullMQ's ErrorCode.JobNotInState: a promote lost the race to the delay timer. */
const JOB_NOT_IN_STATE = -3;

/** What takeTurn answers (key-order.ts). */
type Turn = [0] | [1, string] | [2, number];

/** The set each job running as its key's head must release (module-level: see below). */
const holding = new WeakMap<object, string>();
/** Clients our scripts are defined on. */
const scripted = new WeakSet<object>();

export class KeyOrderedWorker<
  DataType = unknown,
  ResultType = unknown,
  NameType extends string = string,
> extends Worker<DataType, ResultType, NameType> {
  // No own fields: BullMQ's constructor starts the worker (autorun) before a
  // subclass's fields would be initialized, so state lives in the module's maps.
  constructor(
    name: string,
    processor: string | URL | Processor<DataType, ResultType, NameType>,
    opts: WorkerOptions,
  ) {
    super(name, processor, keyOrderedOptions(opts));
  }

  protected override async callProcessJob(
    job: Job<DataType, ResultType, NameType>,
    token: string,
    signal?: AbortSignal,
  ): Promise<ResultType> {
    const turn = await this.takeTurn(job, true);
    if (turn[0] === 2) {
      await job.moveToDelayed(Date.now() + parkDelayMs(turn[1]), token);
      await this.lookAfterParking(job);
      throw new DelayedError(`job ${job.id} waits for an earlier job of its key`);
    }
    if (turn[0] === 1) holding.set(job, turn[1]);
    return super.callProcessJob(job, token, signal);
  }

  protected override async handleCompleted(
    ...args: Parameters<Worker<DataType, ResultType, NameType>['handleCompleted']>
  ): ReturnType<Worker<DataType, ResultType, NameType>['handleCompleted']> {
    const next = await super.handleCompleted(...args);
    await this.releaseIfFinished(args[1]);
    return next;
  }

  protected override async handleFailed(
    ...args: Parameters<Worker<DataType, ResultType, NameType>['handleFailed']>
  ): ReturnType<Worker<DataType, ResultType, NameType>['handleFailed']> {
    const next = await super.handleFailed(...args);
    await this.releaseIfFinished(args[1]);
    return next;
  }

  private async takeTurn(job: Job, countPark: boolean): Promise<Turn> {
    const client = await this.scriptedClient();
    return (await client.runCommand(TAKE_TURN, [
      this.toKey(job.id!),
      job.id,
      this.toKey(''),
      countPark ? '1' : '0',
    ])) as Turn;
  }

  /** The look after parking (see the header); errors only delay the job to its timer. */
  private async lookAfterParking(job: Job): Promise<void> {
    try {
      const again = await this.takeTurn(job, false);
      if (again[0] !== 2) await this.promote(job.id!);
    } catch (e) {
      this.emit('error', e as Error);
    }
  }

  /**
   * Release the key of a job that BullMQ finished (completed, or failed with no retry
   * left). A job still retrying, or one BullMQ did not move (the worker closing), has
   * no finishedOn and keeps its key.
   */
  private async releaseIfFinished(job: Job): Promise<void> {
    const set = holding.get(job);
    if (set === undefined || !job.finishedOn) return;
    holding.delete(job);
    try {
      const client = await this.scriptedClient();
      const next = await client.runCommand(RELEASE_KEY, [
        set,
        this.keys.delayed,
        job.id,
        this.toKey(''),
      ]);
      if (typeof next === 'string') await this.promote(next);
    } catch (e) {
      this.emit('error', e as Error);
    }
  }

  private async promote(jobId: string): Promise<void> {
    try {
      await this.getBackend().promote(jobId);
    } catch (e) {
      // Its delay ran out first and BullMQ moved it to wait: what promote was for.
      if ((e as { code?: number }).code !== JOB_NOT_IN_STATE) throw e;
    }
  }

  private async scriptedClient(): Promise<RedisClient> {
    const client = await this.getBackend().client;
    if (!scripted.has(client)) {
      client.defineCommand(TAKE_TURN, { numberOfKeys: 1, lua: TAKE_TURN_LUA });
      client.defineCommand(RELEASE_KEY, { numberOfKeys: 2, lua: RELEASE_KEY_LUA });
      scripted.add(client);
    }
    return client;
  }
}

/** The options as given, or an error naming the one that cannot work with key order. */
function keyOrderedOptions(opts: WorkerOptions): WorkerOptions {
  if ((opts.connection as { isCluster?: unknown } | undefined)?.isCluster === true) {
    throw new Error(
      'KeyOrderedWorker does not support Redis Cluster: its scripts read a key set named in the job, which may live in another slot',
    );
  }
  if (opts.maxStartedAttempts !== undefined) {
    throw new Error(
      'KeyOrderedWorker refuses maxStartedAttempts: every time a job waits for its key counts as a start, so waiting would fail it',
    );
  }
  return opts;
}

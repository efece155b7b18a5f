/**
 * Adds a batch of jobs and the sink's position covering them in one Redis transaction,
 * and keeps the position read back from Redis: the exactly-once core of the sink.
 *
 * The transaction (one round trip in the steady state), on the task's own connection:
 *     MULTI
 *       per record, in offset order: BullMQ's own add-job script, queued through the
 *       public Job.addJob(transaction) (the call BullMQ's flows use), and with
 *       ordering=key ZADD NX of the job into its key's set and HSET of the set's name
 *       into the job's hash (key-order.ts); for job.id=key
 *       first BullMQ's removeJob script on that id, so a newer change replaces a
 *       waiting job (removeJob leaves an active job alone, and then BullMQ ignores the
 *       add of its id: see flushFollowUps for how that change still gets its job); for
 *       a deleting tombstone removeJob alone
 *       SET position key of each partition in the batch -> offset after its last record
 *     EXEC
 *     WATCH every position key of the task; MGET them      (re-arms the guard, below)
 * MULTI/EXEC is atomic: Redis runs the queued commands with no other client's command
 * in between, and applies either all (EXEC ran) or none (the connection died before
 * EXEC arrived). So after any crash the position keys say exactly which records have
 * their jobs in Redis, whether or not those jobs have since completed and been removed.
 * Queue.addBulk cannot be used: it adds on a plain pipeline (not a transaction) and has
 * no room for the position write.
 *
 * Why no duplicate job, ever:
 *   - A record is written only if its offset is at or above the position read from
 *     Redis after the guard was armed; records below were covered by an earlier EXEC.
 *     So a replay (Kafka redelivers from its older committed offset after a crash)
 *     skips every record whose job was already added, even if that job completed and
 *     was removed. Kafka's committed offset is never above the position (preCommit
 *     offers only covered offsets), so filtering by the position resumes from the
 *     larger of the two.
 *   - The guard: EXEC runs only if no position key the task watches changed since the
 *     WATCH that preceded the MGET the task trusts. Two instances writing one partition
 *     (a zombie task after a rebalance) cannot both pass: the loser's EXEC returns null,
 *     it re-reads the positions and drops what the winner covered. The WATCH re-armed
 *     after EXEC is trusted only if the MGET after it shows exactly the positions this
 *     task wrote; otherwise, after a reconnect (a new connection has no WATCH), or
 *     after a conflict, the next batch first runs WATCH + MGET as its own round trip.
 *   - An EXEC whose answer is lost (connection dropped) is ambiguous: the reconnect
 *     clears trust, the retry re-reads the positions, and they say whether it ran.
 *     ioredis must not resend it on its own: autoResendUnfulfilledCommands is off.
 * A command failing inside EXEC (a BullMQ script error) means a partly applied
 * transaction: the task fails, naming it, rather than guessing.
 *
 * Called from the task only, one call at a time (sink-task.ts's contract).
 */
import { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  ConnectException,
  type TopicPartition,
  topicPartitionKey,
} from '../../src/connect/api/index.ts';
import { encodeId, type JobAction } from './job-mapper.ts';
import { KEY_ORDER_FIELD } from './key-order.ts';
import { positionKey } from './sink-position.ts';

/** What a transaction's commands answer, in ioredis's exec form. */
type ExecResult = Array<[Error | null, unknown]>;

/** One partition's part of a batch: its actions, in offset order, and the position after them. */
export interface PartitionBatch {
  tp: TopicPartition;
  /** The offset after the last record of the batch (records skipped or reported included). */
  end: number;
  actions: readonly JobAction[];
  /** Per action, the record it came from (for reports); same length as actions. */
  offsets: readonly number[];
}

export interface WriteOutcome {
  /** False: another writer moved a position; nothing was written, re-read and retry. */
  written: boolean;
}

type AddAction = Extract<JobAction, { kind: 'add' }>;

export class JobWriter {
  private readonly queues = new Map<string, Queue>();
  /** Per partition key: the next offset Redis has jobs for (absent: none recorded). */
  private readonly positions = new Map<string, number>();
  /** Partitions whose position this writer knows (read or written), keyed by partition key. */
  private readonly known = new Map<string, TopicPartition>();
  /** True while a WATCH on every known position key is armed and matched `positions`. */
  private guarded = false;
  /** Round trips, for tests and the benchmark. */
  readonly stats = { transactions: 0, guardReads: 0, conflicts: 0, followUps: 0 };
  /** Jobs added and removed by committed transactions (the task's metrics read them). */
  readonly jobs = { added: 0, removed: 0 };
  /** Key-replacing adds BullMQ ignored because the key's job was active (flushFollowUps). */
  private followUps: Array<{ queue: Queue; action: AddAction; id: string }> = [];

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly connector: string,
    private readonly replaceByKey: boolean,
  ) {
    // A new connection has no WATCH: trust nothing read on the old one.
    redis.on('close', () => {
      this.guarded = false;
    });
  }

  /** The position of a partition; undefined until read or written. */
  position(tp: TopicPartition): number | undefined {
    return this.positions.get(topicPartitionKey(tp));
  }

  /** Whether positions of these partitions are known and guarded by a WATCH. */
  isGuarded(tps: readonly TopicPartition[]): boolean {
    return this.guarded && tps.every((tp) => this.known.has(topicPartitionKey(tp)));
  }

  /** WATCH and read the positions of `tps` (and every other known partition): one round trip. */
  async readPositions(tps: readonly TopicPartition[]): Promise<void> {
    for (const tp of tps) this.known.set(topicPartitionKey(tp), tp);
    const all = [...this.known.values()];
    const keys = all.map((tp) => positionKey(this.prefix, this.connector, tp));
    this.stats.guardReads++;
    const result = (await this.redis
      .pipeline()
      .watch(...keys)
      .mget(...keys)
      .exec()) as ExecResult;
    const values = unwrap(result, 1) as Array<string | null>;
    all.forEach((tp, i) => {
      const v = values[i];
      if (v === null || v === undefined) this.positions.delete(topicPartitionKey(tp));
      else this.positions.set(topicPartitionKey(tp), Number(v));
    });
    this.guarded = true;
  }

  /** Forget revoked partitions: their next owner reads their positions itself. */
  forget(tps: readonly TopicPartition[]): void {
    for (const tp of tps) {
      this.known.delete(topicPartitionKey(tp));
      this.positions.delete(topicPartitionKey(tp));
    }
  }

  /**
   * Run one transaction for the batches (each partition's records already filtered to
   * those at or above its guarded position). Redis errors reject (the caller retries);
   * a conflict resolves with written=false.
   */
  async write(batches: readonly PartitionBatch[]): Promise<WriteOutcome> {
    // Queues first: building the transaction must not wait for anything, or other
    // commands of this connection could slip between its parts.
    const queues = new Map<string, Queue>();
    for (const b of batches)
      for (const a of b.actions)
        if (a.kind !== 'skip' && !queues.has(a.queue))
          queues.set(a.queue, await this.queue(a.queue));
    const first = queues.values().next().value ?? (await this.queue('connect-sink'));
    // The backend's client is BullMQ's documented Redis escape hatch: a wrapper of
    // this.redis whose multi() can carry BullMQ's scripts.
    const client = await first.getBackend().client;
    const tx = client.multi() as unknown as TransactionLike;
    /** Per removeJob command queued for a key-replacing add: its index in the answers. */
    const replaceChecks: Array<{ index: number; queue: Queue; action: AddAction; id: string }> = [];
    let index = 0;
    let adds = 0;
    let removes = 0;
    for (const b of batches) {
      b.actions.forEach((a, i) => {
        if (a.kind === 'skip') return;
        const queue = queues.get(a.queue)!;
        if (a.kind === 'delete') {
          this.queueRemove(tx, queue, a.jobId);
          removes++;
          index++;
          return;
        }
        adds++;
        if (this.replaceByKey) {
          this.queueRemove(tx, queue, a.opts.jobId);
          replaceChecks.push({
            index,
            queue,
            action: a,
            id: `${a.opts.jobId}~${encodeId(`${b.tp.topic}-${b.tp.partition}-${b.offsets[i]}`)}`,
          });
          index++;
        }
        // Queues BullMQ's add script on the transaction synchronously; the promise
        // it returns settles with nothing useful (the answer comes from exec).
        void new Job(queue, a.name, a.data, a.opts, a.opts.jobId)
          .addJob(tx as never)
          .catch(() => {});
        index++;
        if (a.order !== undefined) {
          // ordering=key (key-order.ts): the job joins its key's set in the same
          // transaction, and its hash names the set for the KeyOrderedWorker.
          tx.zadd(a.order.set, 'NX', a.order.score, a.opts.jobId);
          tx.hset(queue.toKey(a.opts.jobId), { [KEY_ORDER_FIELD]: a.order.set });
          index += 2;
        }
      });
    }
    for (const b of batches) {
      tx.set(positionKey(this.prefix, this.connector, b.tp), String(b.end));
      this.known.set(topicPartitionKey(b.tp), b.tp);
    }
    const all = [...this.known.values()];
    const keys = all.map((tp) => positionKey(this.prefix, this.connector, tp));
    this.stats.transactions++;
    const execution = tx.exec() as Promise<ExecResult | null>;
    // Written right behind EXEC on the same connection: no extra round trip.
    const rearm = this.redis
      .pipeline()
      .watch(...keys)
      .mget(...keys)
      .exec() as Promise<ExecResult>;
    let answers: ExecResult | null;
    try {
      answers = await execution;
    } catch (e) {
      this.guarded = false;
      await rearm.catch(() => undefined);
      throw e;
    }
    if (answers === null) {
      this.guarded = false;
      this.stats.conflicts++;
      await rearm.catch(() => undefined);
      return { written: false };
    }
    const failed = answers.findIndex(([err]) => err !== null);
    if (failed >= 0) {
      this.guarded = false;
      await rearm.catch(() => undefined);
      throw new ConnectException(
        `BullMQ sink: command ${failed + 1} of the transaction failed inside EXEC, so it was applied in part: ${answers[failed]![0]!.message}`,
      );
    }
    for (const b of batches) this.positions.set(topicPartitionKey(b.tp), b.end);
    // Counted once EXEC applied them all (a conflict or a failed EXEC added nothing).
    this.jobs.added += adds;
    this.jobs.removed += removes;
    const kept = replaceChecks.filter((c) => Number(answers[c.index]![1]) === 0);
    // Trust the re-armed WATCH only if it saw exactly what this task knows.
    try {
      const values = unwrap(await rearm, 1) as Array<string | null>;
      this.guarded = all.every((tp, i) => {
        const mine = this.positions.get(topicPartitionKey(tp));
        const v = values[i];
        return mine === undefined ? v === null : v === String(mine);
      });
    } catch {
      this.guarded = false;
    }
    if (kept.length > 0) {
      this.stats.followUps += kept.length;
      for (const k of kept) this.followUps.push({ queue: k.queue, action: k.action, id: k.id });
      await this.flushFollowUps();
    }
    return { written: true };
  }

  /**
   * Add the changes whose key's job was active when their transaction ran (BullMQ
   * kept the active job and ignored the add of the same id), each under its own id
   * `<key id>~<topic>-<partition>-<offset>`, so no change is dropped. This is a second
   * transaction after the first one's answer: a crash between the two loses these
   * changes (the position already covers them). Called before every batch too, so a
   * failed attempt is repeated before anything else is written.
   */
  async flushFollowUps(): Promise<void> {
    if (this.followUps.length === 0) return;
    const pending = this.followUps;
    const first = pending[0]!.queue;
    const client = await first.getBackend().client;
    // The guard's WATCH must not abort these: they are not conditional on it.
    this.guarded = false;
    await this.redis.unwatch();
    const tx = client.multi() as unknown as TransactionLike;
    for (const p of pending) {
      void new Job(p.queue, p.action.name, p.action.data, { ...p.action.opts, jobId: p.id }, p.id)
        .addJob(tx as never)
        .catch(() => {});
    }
    const answers = (await tx.exec()) as ExecResult | null;
    const failed = answers?.find(([err]) => err !== null);
    if (answers === null || failed !== undefined) {
      throw new Error(
        `follow-up adds not applied: ${failed?.[0]?.message ?? 'transaction aborted'}`,
      );
    }
    this.followUps = [];
  }

  /** BullMQ's removeJob script for `jobId`, queued on the transaction (Queue.remove's command). */
  private queueRemove(tx: TransactionLike, queue: Queue, jobId: string): void {
    queue
      .getBackend()
      .execCommand(tx as never, 'removeJob', [
        queue.toKey(jobId),
        queue.toKey('repeat'),
        jobId,
        0,
        queue.toKey(''),
      ]);
  }

  private async queue(name: string): Promise<Queue> {
    let q = this.queues.get(name);
    if (q === undefined) {
      q = new Queue(name, { connection: this.redis, prefix: this.prefix });
      // Errors surface on the commands that fail; without a listener an 'error'
      // event would be thrown.
      q.on('error', () => {});
      this.queues.set(name, q);
    }
    try {
      await q.waitUntilReady();
    } catch (e) {
      this.queues.delete(name);
      void q.close().catch(() => {});
      throw e;
    }
    return q;
  }

  async close(): Promise<void> {
    const queues = [...this.queues.values()];
    this.queues.clear();
    await Promise.allSettled(queues.map((q) => q.close()));
  }
}

interface TransactionLike {
  set(key: string, value: string): unknown;
  zadd(key: string, mode: 'NX', score: number, member: string): unknown;
  /** BullMQ's transaction form: fields as an object. */
  hset(key: string, fields: Record<string, string>): unknown;
  exec(): Promise<unknown>;
}

/** The answer of command `i` of a pipeline, or its error thrown. */
function unwrap(result: ExecResult | null, i: number): unknown {
  if (result === null) throw new Error('pipeline was not executed');
  const entry = result[i];
  if (entry === undefined)
    throw new Error(`pipeline answered ${result.length} commands, expected ${i + 1}`);
  if (entry[0]) throw entry[0];
  return entry[1];
}

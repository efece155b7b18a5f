/**
 * A Kafka group consumer for the sink tasks, over this project's own protocol codec:
 * group membership with the "consumer" protocol and the range assignor (so Java
 * consumers, kafkajs and librdkafka can share a group with it, and
 * kafka-consumer-groups describes it), fetching, offset commits, pause, resume, seek.
 * It replaced kafkajs on the sink path, whose per-record decoding (string offsets,
 * Long arithmetic, a Buffer copy per field) cost a third of a sink task's CPU.
 *
 * Two loops, one owner each:
 *   - the main loop (re)joins when needed and otherwise fetches. A response's records
 *     go to `listener.onBatch`, one call per partition, in order and awaited. The next
 *     Fetch is sent before they are handed over (from the positions they lead to), as
 *     the Java consumer prefetches: the broker reads and sends the next answer while
 *     the listener works. At most one round is ahead; a partition paused, sought or
 *     revoked meanwhile has its part of that answer dropped.
 *   - the heartbeat loop heartbeats every `heartbeatIntervalMs` while the member has a
 *     generation, also while the listener is busy, and asks the main loop to rejoin
 *     when the coordinator says a rebalance is under way.
 *
 * Rebalances are eager (the only protocol "range" has): before JoinGroup the listener
 * gets `onRevoking(assigned)` (the place to commit what is done), after SyncGroup
 * `onAssigned(all partitions now assigned)`. Positions of partitions kept across a
 * rebalance are kept; a new partition starts where the listener seeks it during
 * onAssigned, else at the group's committed offset, else per `autoOffsetReset`.
 * Topics of the subscription that do not exist yet (or new partitions, or new topics
 * matching the regex) are noticed by a metadata check every `metadataMaxAgeMs`
 * (every MISSING_TOPIC_CHECK_MS while some are missing), which triggers a rejoin.
 *
 * Positions move only when records are handed over: a response for a partition that
 * was paused, sought or revoked while the Fetch was out is dropped, and fetched again
 * from the new position. With `readCommitted`, records of aborted transactions are
 * dropped with the Fetch answer's aborted-transaction list, as Kafka's clients do;
 * control batches are never handed over.
 *
 * Errors: group errors that a rejoin cures (unknown member, illegal generation,
 * coordinator moved) are handled here; a partition's leader moving refreshes the
 * metadata; errors nothing here can cure (authorization, an unsupported protocol, no
 * offset with auto.offset.reset=none) go to `listener.onFatal` and end the loops.
 */

import { Wakeup } from '../../util/wakeup.ts';
import { ApiKey } from '../api-keys.ts';
import type { Message } from '../codec.ts';
import {
  CONSUMER_PROTOCOL_TYPE,
  decodeAssignment,
  decodeConsumerSubscription,
  encodeAssignment,
  encodeSubscription,
  RANGE_ASSIGNOR,
  rangeAssign,
} from '../consumer-protocol.ts';
import { ErrorCode, errorByCode } from '../error-codes.ts';
import type { Record as BatchRecord } from '../record-batch.ts';
import { AbortedTransactionFilter, recordsFrom } from './aborted-transactions.ts';
import type { BrokerConnection } from './broker-connection.ts';
import { type ClusterClient, KafkaResponseError } from './cluster-client.ts';

export type ConsumedRecord = BatchRecord;

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface FetchedBatch {
  topic: string;
  partition: number;
  /** In offset order, all at or after the position the partition was fetched from. */
  records: ConsumedRecord[];
}

export interface GroupConsumerListener {
  /** Before (re)joining, the partitions about to be given up; awaited. */
  onRevoking(partitions: TopicPartition[]): Promise<void>;
  /** After a join, every partition now assigned; awaited before any is fetched. */
  onAssigned(partitions: TopicPartition[]): Promise<void>;
  /** Records of one partition, awaited before the next Fetch is sent. */
  onBatch(batch: FetchedBatch): Promise<void>;
  /** The consumer stopped on an error it cannot cure. */
  onFatal(error: Error): void;
}

export interface GroupConsumerLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
}

export interface GroupConsumerOptions extends GroupConsumerSettings {
  /**
   * Metadata, leaders and Fetch connections; the consumer forks it for group requests
   * and closes both on stop().
   */
  client: ClusterClient;
  groupId: string;
  subscription: { topics: readonly string[]; regex: RegExp | null };
  logger: GroupConsumerLogger;
}

/** The settings Kafka's consumer keys give (kafka-clients.ts reads them). */
export interface GroupConsumerSettings {
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** max.poll.interval.ms: how long the coordinator waits for the member in a rebalance. */
  rebalanceTimeoutMs: number;
  fetchMaxBytes: number;
  maxPartitionFetchBytes: number;
  fetchMinBytes: number;
  fetchMaxWaitMs: number;
  /** Where a partition without a committed offset starts (none: the consumer fails). */
  autoOffsetReset: 'earliest' | 'latest' | 'none';
  /** isolation.level=read_committed: records of aborted transactions are dropped. */
  readCommitted: boolean;
  allowAutoTopicCreation: boolean;
  metadataMaxAgeMs: number;
  retryBackoffMs: number;
  requestTimeoutMs: number;
}

/** A commit refused because the group is rebalancing or the member lost its generation. */
export class CommitFailedError extends Error {
  constructor(reason: string) {
    super(
      `offset commit failed: ${reason}; the group rebalanced, and the partitions' new owners continue from the last committed offsets`,
    );
    this.name = 'CommitFailedError';
  }
}

export class ConsumerFatalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConsumerFatalError';
  }
}

const MISSING_TOPIC_CHECK_MS = 500;
/** Extra wait on JoinGroup and SyncGroup beyond the rebalance timeout, as Kafka's clients allow. */
const JOIN_SLACK_MS = 5_000;
const COMMIT_ATTEMPTS = 5;
const NO_GENERATION = -1;

/** Fetch errors a metadata refresh cures: the leader moved or is being elected. */
const LEADER_ERRORS = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.OFFSET_NOT_AVAILABLE,
]);

const COORDINATOR_ERRORS = new Set<number>([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);

/** Group errors after which the member rejoins (with its id reset for the first two). */
const MEMBER_GONE = new Set<number>([ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID]);

interface PartitionState {
  topic: string;
  partition: number;
  /** Next offset to fetch; undefined until initialized (seek, committed offset or reset). */
  position: number | undefined;
  paused: boolean;
}

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/** The answers of one Fetch round: per leader, and the offsets it asked for. */
type FetchRound = Array<{ answer: Message; requested: Map<PartitionState, number> }>;

/** A partition's records from a Fetch answer, not yet handed over. */
interface ParsedAnswer {
  state: PartitionState;
  /** The position the records were fetched from, and the one after them. */
  from: number;
  next: number;
  records: ConsumedRecord[] | undefined;
}

export class GroupConsumer {
  private readonly groupClient: ClusterClient;
  private coordinator: Promise<BrokerConnection> | undefined;
  private memberId = '';
  private generation = NO_GENERATION;
  private rejoinNeeded = true;
  private running = false;
  private assigned = new Map<string, PartitionState>();
  /** While rejoining: the partitions of the last generation, and its number. */
  private held = new Map<string, PartitionState>();
  private heldGeneration = NO_GENERATION;
  /** Topic -> partition count the member saw when it last joined (the subscription's view). */
  private seenTopics = new Map<string, number>();
  private nextMetadataCheck = 0;
  private loop: Promise<void> | undefined;
  private heartbeats: Promise<void> | undefined;
  /** Cut the main loop's wait short (resume, seek, rejoin, stop). */
  private readonly mainWakeup = new Wakeup();
  /** Cut the heartbeat loop's wait short (joined, stop). */
  private readonly heartbeatWakeup = new Wakeup();
  private missingWarned = '';
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private listener: GroupConsumerListener | undefined;
  /** The Fetch the last round sent ahead, for the generation it was sent in. */
  private ahead: { generation: number; round: Promise<FetchRound> } | undefined;

  constructor(private readonly o: GroupConsumerOptions) {
    this.groupClient = o.client.fork();
  }

  /** The partitions assigned in the current generation. */
  assignment(): TopicPartition[] {
    return [...this.assigned.values()].map(({ topic, partition }) => ({ topic, partition }));
  }

  /** Joins the group and starts fetching; `listener` gets assignments and records. */
  start(listener: GroupConsumerListener): void {
    if (this.running || this.stopped) return;
    this.listener = listener;
    this.running = true;
    this.loop = this.runMain();
    this.heartbeats = this.runHeartbeats();
  }

  pause(partitions: readonly TopicPartition[]): void {
    for (const tp of partitions) {
      const s = this.assigned.get(key(tp.topic, tp.partition));
      if (s) s.paused = true;
    }
  }

  resume(partitions: readonly TopicPartition[]): void {
    for (const tp of partitions) {
      const s = this.assigned.get(key(tp.topic, tp.partition));
      if (s) s.paused = false;
    }
    this.mainWakeup.wake();
  }

  /** The next fetch of the partition starts at `offset`; ignored for a partition not assigned. */
  seek(tp: TopicPartition, offset: number): void {
    const s = this.assigned.get(key(tp.topic, tp.partition));
    if (s) s.position = offset;
    // The Fetch sent ahead asked for the old position: fetch anew rather than wait for it.
    this.ahead = undefined;
    this.mainWakeup.wake();
  }

  /** Commits offsets with the current generation; CommitFailedError when the group rebalanced. */
  async commit(
    offsets: ReadonlyArray<TopicPartition & { offset: number; metadata?: string | null }>,
  ): Promise<void> {
    if (offsets.length === 0) return;
    const topics = [...groupByTopic(offsets)].map(([name, list]) => ({
      name,
      partitions: list.map((t) => ({
        partitionIndex: t.partition,
        committedOffset: BigInt(t.offset),
        committedLeaderEpoch: -1,
        commitTimestamp: -1n,
        committedMetadata: t.metadata ?? null,
      })),
    }));
    for (let attempt = 1; ; attempt++) {
      if (this.generation === NO_GENERATION)
        throw new CommitFailedError('the member has no generation (it is joining the group)');
      let code = 0;
      try {
        const conn = await this.coordinatorConnection();
        const answer = await conn.request(ApiKey.OffsetCommit, {
          groupId: this.o.groupId,
          generationId: this.generation,
          memberId: this.memberId,
          groupInstanceId: null,
          retentionTimeMs: -1n,
          topics,
        });
        for (const t of answer.topics as Message[]) {
          for (const p of t.partitions as Message[]) if (p.errorCode !== 0) code = p.errorCode;
        }
      } catch (e) {
        this.dropCoordinator();
        if (attempt >= COMMIT_ATTEMPTS || !this.running) throw e;
        await delay(this.o.retryBackoffMs * attempt);
        continue;
      }
      if (code === 0) return;
      if (
        code === ErrorCode.REBALANCE_IN_PROGRESS ||
        code === ErrorCode.ILLEGAL_GENERATION ||
        MEMBER_GONE.has(code)
      ) {
        if (MEMBER_GONE.has(code)) this.memberId = '';
        this.requestRejoin();
        throw new CommitFailedError(errorByCode(code).name);
      }
      if (COORDINATOR_ERRORS.has(code) || errorByCode(code).retriable) {
        this.dropCoordinator();
        if (attempt < COMMIT_ATTEMPTS && this.running) {
          await delay(this.o.retryBackoffMs * attempt);
          continue;
        }
      }
      throw new KafkaResponseError(code, `committing offsets of group ${this.o.groupId}`);
    }
  }

  /** Ends both loops, leaves the group (its partitions move at once) and closes connections. */
  stop(): Promise<void> {
    this.stopping ??= this.leave();
    return this.stopping;
  }

  private async leave(): Promise<void> {
    this.stopped = true;
    this.running = false;
    this.mainWakeup.wake();
    this.heartbeatWakeup.wake();
    await Promise.allSettled([this.loop, this.heartbeats]);
    if (this.memberId !== '') {
      try {
        const conn = await this.coordinatorConnection();
        await conn.request(
          ApiKey.LeaveGroup,
          {
            groupId: this.o.groupId,
            memberId: this.memberId,
            members: [
              { memberId: this.memberId, groupInstanceId: null, reason: 'consumer stopping' },
            ],
          },
          { timeoutMs: Math.min(this.o.requestTimeoutMs, 5_000) },
        );
      } catch (e) {
        this.o.logger.debug({ err: e }, `leaving group ${this.o.groupId} failed`);
      }
    }
    this.o.client.close();
    this.groupClient.close();
  }

  private requestRejoin(): void {
    if (this.rejoinNeeded) return;
    this.rejoinNeeded = true;
    this.mainWakeup.wake();
  }

  // ---- main loop --------------------------------------------------------------------

  private async runMain(): Promise<void> {
    while (this.running) {
      try {
        if (this.rejoinNeeded) {
          await this.rejoin();
          continue;
        }
        if (Date.now() >= this.nextMetadataCheck) await this.checkMetadata();
        if (this.rejoinNeeded) continue;
        await this.initPositions();
        await this.fetchOnce();
      } catch (e) {
        if (!this.running) break;
        if (e instanceof ConsumerFatalError) {
          this.running = false;
          this.heartbeatWakeup.wake();
          this.listener!.onFatal(e);
          break;
        }
        this.o.logger.warn(
          { err: e },
          `consumer of group ${this.o.groupId} retries after an error`,
        );
        this.o.client.invalidate();
        await this.sleep(this.o.retryBackoffMs);
      }
    }
  }

  /** The topics (and their partition counts) the subscription covers now. */
  private async subscribedTopics(): Promise<Map<string, number>> {
    const { topics, regex } = this.o.subscription;
    const metadata =
      regex !== null
        ? await this.o.client.metadata(null)
        : await this.o.client.metadata([...topics], this.o.allowAutoTopicCreation);
    const found = new Map<string, number>();
    for (const t of metadata) {
      // exclude.internal.topics=true, as Kafka's consumer (and so Kafka Connect) has it.
      if (regex !== null && (t.internal || !regex.test(t.name))) continue;
      if (t.errorCode === ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        throw new ConsumerFatalError(`not authorized to read topic ${t.name}`);
      // Not there yet (or being created): reported below when it was asked for by name.
      if (t.errorCode !== 0 || t.partitions.length === 0) continue;
      found.set(t.name, t.partitions.length);
    }
    const wanted = regex !== null ? [] : topics.filter((t) => !found.has(t));
    const report = regex !== null && found.size === 0 ? [`/${regex.source}/`] : wanted;
    const text = report.join(', ');
    if (text !== '' && text !== this.missingWarned) {
      this.o.logger.warn(`group ${this.o.groupId} waits for topics ${text} to exist`);
    }
    this.missingWarned = text;
    this.nextMetadataCheck =
      Date.now() + (text !== '' ? MISSING_TOPIC_CHECK_MS : this.o.metadataMaxAgeMs);
    return found;
  }

  private async checkMetadata(): Promise<void> {
    const now = await this.subscribedTopics();
    if (!sameCounts(now, this.seenTopics)) {
      this.o.logger.info(
        `group ${this.o.groupId}: the subscribed topics or their partitions changed; rejoining`,
      );
      this.requestRejoin();
    }
  }

  private async rejoin(): Promise<void> {
    if (this.generation !== NO_GENERATION) {
      // Eager protocol: everything is given up before joining (the listener commits now).
      if (this.assigned.size > 0) await this.listener!.onRevoking(this.assignment());
      this.held = this.assigned;
      this.heldGeneration = this.generation;
      this.assigned = new Map();
      this.generation = NO_GENERATION;
    }
    const previous = this.held;
    const previousGeneration = this.heldGeneration;
    const topics = await this.subscribedTopics();
    this.seenTopics = topics;
    const conn = await this.coordinatorConnection();
    const joined = await conn.request(
      ApiKey.JoinGroup,
      {
        groupId: this.o.groupId,
        sessionTimeoutMs: this.o.sessionTimeoutMs,
        rebalanceTimeoutMs: this.o.rebalanceTimeoutMs,
        memberId: this.memberId,
        groupInstanceId: null,
        protocolType: CONSUMER_PROTOCOL_TYPE,
        protocols: [{ name: RANGE_ASSIGNOR, metadata: encodeSubscription([...topics.keys()]) }],
        reason: null,
      },
      { timeoutMs: this.o.rebalanceTimeoutMs + JOIN_SLACK_MS },
    );
    if (!this.running) return;
    const code = joined.errorCode as number;
    if (code === ErrorCode.MEMBER_ID_REQUIRED) {
      this.memberId = joined.memberId as string;
      return; // join again at once with the id
    }
    if (code !== 0) return this.groupError(code, 'JoinGroup');
    this.memberId = joined.memberId as string;
    const generation = joined.generationId as number;
    let assignments: Array<{ memberId: string; assignment: Buffer }> = [];
    if (joined.leader === this.memberId && joined.skipAssignment !== true) {
      assignments = await this.assign(joined.members as Message[]);
    }
    const synced = await conn.request(
      ApiKey.SyncGroup,
      {
        groupId: this.o.groupId,
        generationId: generation,
        memberId: this.memberId,
        groupInstanceId: null,
        protocolType: CONSUMER_PROTOCOL_TYPE,
        protocolName: RANGE_ASSIGNOR,
        assignments,
      },
      { timeoutMs: this.o.rebalanceTimeoutMs + JOIN_SLACK_MS },
    );
    if (!this.running) return;
    const syncCode = synced.errorCode as number;
    if (syncCode !== 0) return this.groupError(syncCode, 'SyncGroup');
    // A partition kept from the generation just before keeps its position and pause
    // (nobody else can have owned it in between, and the listener keeps what it holds
    // of it). After a gap (the membership was lost), the listener first hears that
    // everything is gone, so it drops what it held.
    const consecutive = generation === previousGeneration + 1;
    const next = new Map<string, PartitionState>();
    for (const { topic, partitions } of decodeAssignment(synced.assignment as Buffer)) {
      for (const partition of partitions) {
        const k = key(topic, partition);
        const kept = consecutive ? previous.get(k) : undefined;
        next.set(k, kept ?? { topic, partition, position: undefined, paused: false });
      }
    }
    if (!consecutive && previous.size > 0) await this.listener!.onAssigned([]);
    this.assigned = next;
    this.held = new Map();
    this.generation = generation;
    this.rejoinNeeded = false;
    this.heartbeatWakeup.wake();
    this.o.logger.info(
      `group ${this.o.groupId} generation ${generation}: assigned ${describe(this.assignment())}`,
    );
    await this.listener!.onAssigned(this.assignment());
  }

  /** The leader's range assignment over every member's subscription. */
  private async assign(
    members: Message[],
  ): Promise<Array<{ memberId: string; assignment: Buffer }>> {
    const subscriptions = new Map<string, string[]>();
    const all = new Set<string>();
    for (const m of members) {
      const topics = decodeConsumerSubscription(m.metadata as Buffer);
      subscriptions.set(m.memberId as string, topics);
      for (const t of topics) all.add(t);
    }
    // Members of a Connect sink group subscribe alike: the counts this member read
    // just before joining then serve, and only other topics cost a Metadata request.
    let counts: ReadonlyMap<string, number> = this.seenTopics;
    const others = [...all].filter((t) => !this.seenTopics.has(t));
    if (others.length > 0) {
      const more = new Map(this.seenTopics);
      for (const t of await this.o.client.metadata(others)) {
        if (t.errorCode === 0 && t.partitions.length > 0) more.set(t.name, t.partitions.length);
      }
      counts = more;
    }
    const result = rangeAssign(subscriptions, counts);
    return [...result].map(([memberId, assigned]) => ({
      memberId,
      assignment: encodeAssignment(assigned),
    }));
  }

  private async groupError(code: number, api: string): Promise<void> {
    const info = errorByCode(code);
    if (COORDINATOR_ERRORS.has(code)) this.dropCoordinator();
    else if (MEMBER_GONE.has(code)) this.memberId = '';
    else if (code !== ErrorCode.REBALANCE_IN_PROGRESS && code !== ErrorCode.ILLEGAL_GENERATION) {
      if (!info.retriable) {
        throw new ConsumerFatalError(
          `${api} for group ${this.o.groupId} failed: ${info.name}: ${info.message}`,
        );
      }
    }
    this.o.logger.debug({ code: info.name }, `${api} for group ${this.o.groupId}; joining again`);
    await this.sleep(code === ErrorCode.REBALANCE_IN_PROGRESS ? 0 : this.o.retryBackoffMs);
  }

  /** Committed offsets (or the reset position) for assigned partitions without a position. */
  private async initPositions(): Promise<void> {
    const missing = [...this.assigned.values()].filter((s) => s.position === undefined);
    if (missing.length === 0) return;
    const generation = this.generation;
    const conn = await this.coordinatorConnection();
    const byTopic = groupByTopic(missing);
    const version = Math.min(conn.versionFor(ApiKey.OffsetFetch) ?? 0, 7);
    const answer = await conn.request(
      ApiKey.OffsetFetch,
      {
        groupId: this.o.groupId,
        topics: [...byTopic].map(([name, ps]) => ({
          name,
          partitionIndexes: ps.map((p) => p.partition),
        })),
        requireStable: true,
      },
      { version },
    );
    if (answer.errorCode) {
      if (COORDINATOR_ERRORS.has(answer.errorCode)) this.dropCoordinator();
      throw new KafkaResponseError(answer.errorCode, `fetching offsets of group ${this.o.groupId}`);
    }
    if (generation !== this.generation) return;
    const resets: PartitionState[] = [];
    for (const t of answer.topics as Message[]) {
      for (const p of t.partitions as Message[]) {
        const s = this.assigned.get(key(t.name, p.partitionIndex));
        if (!s || s.position !== undefined) continue;
        if (p.errorCode !== 0) {
          throw new KafkaResponseError(
            p.errorCode,
            `fetching the committed offset of ${t.name}-${p.partitionIndex}`,
          );
        }
        const committed = Number(p.committedOffset);
        if (committed >= 0) s.position = committed;
        else resets.push(s);
      }
    }
    await this.resetPositions(resets);
  }

  /** Positions from auto.offset.reset (ListOffsets earliest or latest) for these partitions. */
  private async resetPositions(states: PartitionState[]): Promise<void> {
    if (states.length === 0) return;
    if (this.o.autoOffsetReset === 'none') {
      throw new ConsumerFatalError(
        `no committed offset for ${describe(states)} in group ${this.o.groupId}, and auto.offset.reset=none`,
      );
    }
    const timestamp = this.o.autoOffsetReset === 'earliest' ? -2n : -1n;
    for (const [conn, list] of await this.byLeader(states)) {
      const answer = await conn.request(ApiKey.ListOffsets, {
        replicaId: -1,
        isolationLevel: this.o.readCommitted ? 1 : 0,
        topics: [...groupByTopic(list)].map(([name, ps]) => ({
          name,
          partitions: ps.map((p) => ({
            partitionIndex: p.partition,
            currentLeaderEpoch: -1,
            timestamp,
          })),
        })),
      });
      for (const t of answer.topics as Message[]) {
        for (const p of t.partitions as Message[]) {
          const s = this.assigned.get(key(t.name, p.partitionIndex));
          if (!s || s.position !== undefined) continue;
          if (p.errorCode !== 0) {
            if (LEADER_ERRORS.has(p.errorCode)) this.o.client.invalidate();
            throw new KafkaResponseError(
              p.errorCode,
              `listing offsets of ${t.name}-${p.partitionIndex}`,
            );
          }
          s.position = Number(p.offset);
        }
      }
    }
  }

  private async byLeader(
    states: readonly PartitionState[],
  ): Promise<Map<BrokerConnection, PartitionState[]>> {
    const out = new Map<BrokerConnection, PartitionState[]>();
    for (const s of states) {
      const conn = await this.o.client.leaderConnection(s.topic, s.partition);
      const list = out.get(conn) ?? [];
      list.push(s);
      out.set(conn, list);
    }
    return out;
  }

  /**
   * One round: the Fetch answers (the one sent ahead by the previous round, when it
   * is of this generation, else a new Fetch), parsed; then a Fetch for the positions
   * they lead to is sent ahead; then the records go to the listener, partition by
   * partition. So the broker reads and sends the next answer while the listener works
   * on this one, as the Java consumer's prefetch does.
   */
  private async fetchOnce(): Promise<void> {
    const fetchable = this.fetchable();
    const ahead = this.ahead;
    this.ahead = undefined;
    if (fetchable.length === 0) {
      await this.sleep(this.o.fetchMaxWaitMs);
      return;
    }
    const generation = this.generation;
    const answers = await (ahead !== undefined && ahead.generation === generation
      ? ahead.round
      : this.fetchFrom(await this.byLeader(fetchable), (s) => s.position as number));
    const parsed: ParsedAnswer[] = [];
    for (const { answer, requested } of answers) {
      if (answer.errorCode) {
        throw new KafkaResponseError(answer.errorCode, `fetching for group ${this.o.groupId}`);
      }
      for (const t of answer.responses as Message[]) {
        for (const p of t.partitions as Message[]) {
          if (this.outdated(generation)) return;
          const s = this.assigned.get(key(t.topic, p.partitionIndex));
          // Paused, sought or revoked since the Fetch was sent: fetched again from the new position.
          if (!s || s.paused || s.position !== requested.get(s)) continue;
          const answer = await this.partitionAnswer(s, p);
          if (answer !== undefined) parsed.push(answer);
        }
      }
    }
    if (parsed.length === 0) return;
    const leaders = await this.byLeader(this.fetchable());
    if (leaders.size > 0 && !this.outdated(generation)) {
      const next = new Map(parsed.map((a) => [a.state, a.next]));
      // Written to the sockets now, before the records are handed over: a request
      // issued from a continuation would wait until the listener's synchronous work
      // (converting the whole batch) is done.
      const round = this.fetchFrom(leaders, (s) => next.get(s) ?? (s.position as number));
      // Awaited by the next round, or dropped (rejoin, seek): never an unhandled rejection.
      round.catch(() => undefined);
      this.ahead = { generation, round };
    }
    for (const a of parsed) {
      if (this.outdated(generation)) return;
      const s = a.state;
      // Paused, sought or revoked while an earlier partition was delivered: fetched again.
      if (s.paused || s.position !== a.from || this.assigned.get(key(s.topic, s.partition)) !== s) {
        continue;
      }
      s.position = a.next;
      if (a.records === undefined) continue;
      try {
        await this.listener!.onBatch({
          topic: s.topic,
          partition: s.partition,
          records: a.records,
        });
      } catch (e) {
        // The position already moved past these records: going on would skip them.
        throw new ConsumerFatalError(`the batch listener of group ${this.o.groupId} failed`, {
          cause: e,
        });
      }
    }
  }

  /** Whether a round of `generation` must stop: stopping, or the group moved on. */
  private outdated(generation: number): boolean {
    return !this.running || generation !== this.generation || this.rejoinNeeded;
  }

  private fetchable(): PartitionState[] {
    return [...this.assigned.values()].filter((s) => !s.paused && s.position !== undefined);
  }

  /**
   * One Fetch to each leader, for its partitions, from the offsets `position` gives.
   * The requests are written before this returns.
   */
  private fetchFrom(
    leaders: Map<BrokerConnection, PartitionState[]>,
    position: (s: PartitionState) => number,
  ): Promise<FetchRound> {
    return Promise.all(
      [...leaders].map(async ([conn, list]) => {
        const requested = new Map(list.map((s) => [s, position(s)]));
        const answer = await conn.request(
          ApiKey.Fetch,
          {
            replicaId: -1,
            maxWaitMs: this.o.fetchMaxWaitMs,
            minBytes: this.o.fetchMinBytes,
            maxBytes: this.o.fetchMaxBytes,
            isolationLevel: this.o.readCommitted ? 1 : 0,
            sessionId: 0,
            sessionEpoch: -1,
            topics: [...groupByTopic(list)].map(([topic, ps]) => ({
              topic,
              partitions: ps.map((p) => ({
                partition: p.partition,
                currentLeaderEpoch: -1,
                fetchOffset: BigInt(requested.get(p)!),
                logStartOffset: -1n,
                partitionMaxBytes: this.o.maxPartitionFetchBytes,
              })),
            })),
            forgottenTopicsData: [],
            rackId: '',
          },
          { timeoutMs: this.o.requestTimeoutMs + this.o.fetchMaxWaitMs },
        );
        return { answer, requested };
      }),
    );
  }

  /**
   * A partition's Fetch answer: its records and the position after them, or undefined
   * when there is nothing to hand over (no records, an error handled here).
   */
  private async partitionAnswer(s: PartitionState, p: Message): Promise<ParsedAnswer | undefined> {
    const code = p.errorCode as number;
    if (code === ErrorCode.OFFSET_OUT_OF_RANGE) {
      this.o.logger.warn(
        `${s.topic}-${s.partition}: offset ${s.position} is out of range (log start ${p.logStartOffset}, end ${p.highWatermark}); resetting to ${this.o.autoOffsetReset}`,
      );
      s.position = undefined;
      await this.resetPositions([s]);
      return undefined;
    }
    if (code !== 0) {
      if (LEADER_ERRORS.has(code)) {
        this.o.client.invalidate();
        return undefined;
      }
      if (code === ErrorCode.TOPIC_AUTHORIZATION_FAILED) {
        throw new ConsumerFatalError(`not authorized to read topic ${s.topic}`);
      }
      throw new KafkaResponseError(code, `fetching ${s.topic}-${s.partition}`);
    }
    const buf = p.records as Buffer | null;
    if (buf === null || buf.length === 0) return undefined;
    const from = s.position!;
    const filter = AbortedTransactionFilter.forAnswer(
      this.o.readCommitted,
      p.abortedTransactions as Message[] | null,
    );
    const { records, next } = recordsFrom(buf, from, filter);
    if (next === from) return undefined;
    return { state: s, from, next, records };
  }

  // ---- heartbeats ---------------------------------------------------------------------

  private async runHeartbeats(): Promise<void> {
    while (this.running) {
      await this.heartbeatWakeup.wait(this.o.heartbeatIntervalMs);
      // Also while a rejoin waits for onRevoking: the session must outlive a slow
      // commit (the coordinator allows the rebalance timeout for it, not the session's).
      if (!this.running || this.generation === NO_GENERATION) continue;
      const generation = this.generation;
      try {
        const conn = await this.coordinatorConnection();
        const answer = await conn.request(
          ApiKey.Heartbeat,
          {
            groupId: this.o.groupId,
            generationId: generation,
            memberId: this.memberId,
            groupInstanceId: null,
          },
          { timeoutMs: Math.max(this.o.heartbeatIntervalMs, 1_000) + this.o.sessionTimeoutMs / 2 },
        );
        const code = answer.errorCode as number;
        if (code === 0 || generation !== this.generation) continue;
        if (COORDINATOR_ERRORS.has(code)) this.dropCoordinator();
        else {
          if (MEMBER_GONE.has(code)) this.memberId = '';
          if (!this.rejoinNeeded) {
            this.o.logger.info(
              `group ${this.o.groupId}: heartbeat answered ${errorByCode(code).name}; rejoining`,
            );
          }
          this.requestRejoin();
        }
      } catch (e) {
        this.o.logger.debug({ err: e }, `heartbeat of group ${this.o.groupId} failed`);
        this.dropCoordinator();
      }
    }
  }

  // ---- plumbing -----------------------------------------------------------------------

  /**
   * The coordinator's connection, from a client of its own: a long-polling Fetch on
   * the same connection would hold heartbeats and commits up behind it.
   */
  private coordinatorConnection(): Promise<BrokerConnection> {
    const current = this.coordinator;
    if (current) {
      return current.then(
        (c) => (c.closed ? this.reconnectCoordinator(current) : c),
        () => this.reconnectCoordinator(current),
      );
    }
    return this.reconnectCoordinator(undefined);
  }

  private reconnectCoordinator(
    stale: Promise<BrokerConnection> | undefined,
  ): Promise<BrokerConnection> {
    if (this.coordinator !== stale && this.coordinator !== undefined) return this.coordinator;
    const opening = this.groupClient.coordinatorFor(this.o.groupId);
    this.coordinator = opening;
    opening.catch(() => {
      if (this.coordinator === opening) this.coordinator = undefined;
    });
    return opening;
  }

  private dropCoordinator(): void {
    this.coordinator = undefined;
    this.groupClient.invalidate();
  }

  private sleep(ms: number): Promise<void> {
    if (!this.running || ms <= 0) return Promise.resolve();
    return this.mainWakeup.wait(ms);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function groupByTopic<T extends TopicPartition>(list: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const tp of list) {
    const same = out.get(tp.topic) ?? [];
    same.push(tp);
    out.set(tp.topic, same);
  }
  return out;
}

function describe(list: ReadonlyArray<TopicPartition>): string {
  if (list.length === 0) return 'no partitions';
  return [...groupByTopic(list)]
    .map(([t, ps]) => `${t}-[${ps.map((p) => p.partition).join(',')}]`)
    .join(' ');
}

function sameCounts(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  if (a.size !== b.size) return false;
  for (const [t, n] of a) if (b.get(t) !== n) return false;
  return true;
}

/**
 * A worker's membership in the `connect` group (Kafka Connect's WorkerGroupMember
 * and WorkerCoordinator). It finds the coordinator (FindCoordinator), joins
 * (JoinGroup, protocol type "connect"), has the leader compute assignments with the
 * incremental cooperative assignor, syncs (SyncGroup), and heartbeats every
 * `heartbeatIntervalMs`. It speaks only the Kafka protocol, so it works against the
 * embedded broker and a real Kafka cluster alike.
 *
 * Two loops, one owner each: the main loop joins, syncs and runs the herder's
 * callbacks; the heartbeat loop only heartbeats during a stable generation (also
 * while a callback such as stopping tasks is running, so a slow stop does not cost
 * the membership) and leaves what it learns (rejoin, membership gone) in flags that
 * the main loop acts on. They share the member's own coordinator connection.
 *
 * Contract with the herder (the listener), called from the main loop only and
 * awaited, one at a time:
 *   - `leaderSnapshot(maxMemberOffset)` (leader only): read the config topic at
 *     least to `maxMemberOffset` and answer the configured connectors with their
 *     committed task counts and the offset read. If the offset is still behind,
 *     every member gets a CONFIG_MISMATCH assignment and rejoins.
 *   - `onRevoked(work)`: stop this work now; resolve once it is stopped. The member
 *     then rejoins at once so the follow-up rebalance can place it elsewhere.
 *   - `onAssigned(event)`: start `event.assigned` (after reading the config topic to
 *     `event.configOffset`); `event.allocation` is everything this member now owns.
 *     An event with `error` CONFIG_MISMATCH carries no work: read the config topic
 *     to its end; the member rejoins by itself.
 *   - `onMembershipLost(work)`: the member could not reach the coordinator for
 *     `sessionTimeoutMs` (or was told its member id or generation is gone): the
 *     coordinator may already have given this work to others, so stop it now.
 *
 * Invariants: the allocation sent in JoinGroup metadata is what this member runs
 * (revocations are applied before rejoining); a member whose last answered request
 * was sent almost `sessionTimeoutMs` ago (less a margin of min(heartbeat interval,
 * session/10)) drops all its work before the coordinator can have expired it (the
 * coordinator counts from when it received that request, which is later), and the
 * assignor holds a vanished member's work for scheduled.rebalance.max.delay.ms
 * after that, so a task never runs on two workers in one generation. A JoinGroup or SyncGroup awaiting its answer counts as contact:
 * the coordinator does not expire members that wait in a rebalance. (Known gap,
 * shared with Kafka's own clients: a JoinGroup lost in a silent network partition
 * holds off the session check until the request times out, rebalance.timeout.ms
 * plus 5 s; the assignor's delay still covers that when it is longer.)
 *
 * Protocols: sessioned (v2) and compatible (v1) are incremental; if the group
 * settles on "default" (eager, a Java worker configured so), every member revokes
 * all its work before each join and assignments are complete, not incremental.
 *
 * Stop: `stop()` ends the loop, revokes nothing by itself (the herder stops its work
 * first), sends LeaveGroup so the others rebalance at once (not for static members),
 * closes its coordinator connection and waits for both loops.
 */
import { ApiKey } from '../../protocol/api-keys.ts';
import type { BrokerConnection } from '../../protocol/client/broker-connection.ts';
import type { ClusterClient } from '../../protocol/client/cluster-client.ts';
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/logger.ts';
import type { Timers } from '../../util/timers.ts';
import {
  ASSIGNMENT_NO_ERROR,
  CONNECT_PROTOCOL_V0,
  type ConnectAssignment,
  type ConnectProtocolMode,
  decodeAssignment,
  joinProtocols,
  protocolVersionOf,
} from './connect-protocol.ts';
import { CoordinatorLink } from './coordinator-link.ts';
import {
  decodeMembers,
  groupAssignment,
  type LeaderSnapshot,
  maxConfigOffset,
} from './group-assignment.ts';
import {
  type AssignorState,
  connectorKey,
  initialAssignorState,
  type Owner,
  taskKey,
  type WorkItem,
  type WorkLoad,
} from './incremental-cooperative-assignor.ts';

export const CONNECT_PROTOCOL_TYPE = 'connect';

export type { LeaderSnapshot };

export interface AssignmentEvent {
  generation: number;
  memberId: string;
  leaderId: string;
  leaderUrl: string;
  /** The config topic offset the leader assigned at: read at least this far before starting work. */
  configOffset: number;
  error: number;
  protocol: string;
  assigned: WorkLoad;
  /** Everything the member owns after this assignment. */
  allocation: WorkLoad;
  /** ms until a scheduled rebalance (held work of a vanished member); 0: none. */
  delay: number;
}

export interface WorkerRebalanceListener {
  leaderSnapshot(maxMemberOffset: number): Promise<LeaderSnapshot>;
  onRevoked(work: WorkLoad): Promise<void>;
  onAssigned(event: AssignmentEvent): Promise<void>;
  onMembershipLost(work: WorkLoad, reason: string): Promise<void>;
  /** The member is about to (re)join: a rebalance starts (metrics). */
  onJoinPrepare?(): void;
  /** Lost work known to be stopped by its owner may move at once (see the assignor). */
  released?(item: WorkItem, owner: Owner): boolean;
  /** A fatal group error (FENCED_INSTANCE_ID, INCONSISTENT_GROUP_PROTOCOL): the loop has stopped. */
  onFatal?(error: Error): void;
}

export interface WorkerGroupMemberOptions {
  client: ClusterClient;
  groupId: string;
  /** The worker's advertised REST URL, sent to the group and shown as leader URL. */
  url: string;
  /**
   * connect.protocol; default compatible. "sessioned" promises Java workers that the
   * leader distributes a session key (KIP-507) on the config topic, which this
   * runtime does not do yet, so it is opt-in.
   */
  mode?: ConnectProtocolMode;
  /** session.timeout.ms (Connect's default 10000). */
  sessionTimeoutMs: number;
  /** rebalance.timeout.ms (Connect's default 60000). */
  rebalanceTimeoutMs: number;
  /** heartbeat.interval.ms (Connect's default 3000). */
  heartbeatIntervalMs: number;
  /** scheduled.rebalance.max.delay.ms. */
  maxDelayMs: number;
  /** group.instance.id (static membership), if configured. */
  groupInstanceId?: string | null;
  /** The config topic offset this worker has read, sent in its metadata. */
  configOffset: () => number;
  listener: WorkerRebalanceListener;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** Pause after a failed request before trying again (retry.backoff.ms). */
  retryBackoffMs?: number;
  /**
   * Opens the member's own connection to the coordinator (default: a new
   * BrokerConnection). Dedicated, so a JoinGroup parked in a rebalance never delays
   * other traffic and `stop()` can end it by closing the connection.
   */
  openConnection?: (host: string, port: number) => Promise<BrokerConnection>;
}

export type MemberState = 'unjoined' | 'joining' | 'stable' | 'stopped';

export class GroupMembershipError extends Error {
  readonly kind = 'group-membership';
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
    this.name = 'GroupMembershipError';
  }
}

const NO_GENERATION = -1;
/** Slack on top of the rebalance timeout for a JoinGroup answer to arrive. */
const JOIN_REQUEST_SLACK_MS = 5_000;

const COORDINATOR_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);

export class WorkerGroupMember {
  private memberIdValue = '';
  private generationValue = NO_GENERATION;
  private lastCompletedGeneration = NO_GENERATION;
  private leaderIdValue = '';
  private leaderUrlValue = '';
  private protocol = '';
  private stateValue: MemberState = 'unjoined';
  private allocation = new Map<string, WorkItem>();
  private lastAssignment: ConnectAssignment | null = null;
  private assignorState: AssignorState = initialAssignorState();
  private readonly link: CoordinatorLink;
  private lastContact: number;
  private rejoinNeeded = true;
  private running = false;
  private loop: Promise<void> | undefined;
  private heartbeats: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private wakeHeartbeat: (() => void) | undefined;
  /** Set by the heartbeat loop, acted on by the main loop. */
  private pendingLoss: { reason: string; resetMemberId: boolean; generation: number } | undefined;
  private pendingFatal: GroupMembershipError | undefined;
  /** A JoinGroup or SyncGroup is awaiting its answer on the coordinator connection. */
  private inRebalance = false;
  private cancelScheduledRejoin: (() => void) | undefined;
  private readonly retryBackoffMs: number;
  private readonly mode: ConnectProtocolMode;

  constructor(private readonly options: WorkerGroupMemberOptions) {
    this.lastContact = options.clock.now();
    this.retryBackoffMs = options.retryBackoffMs ?? 100;
    this.mode = options.mode ?? 'compatible';
    this.link = new CoordinatorLink(options);
  }

  get memberId(): string {
    return this.memberIdValue;
  }
  get generation(): number {
    return this.generationValue;
  }
  get leaderId(): string {
    return this.leaderIdValue;
  }
  get leaderUrl(): string {
    return this.leaderUrlValue;
  }
  get isLeader(): boolean {
    return this.memberIdValue !== '' && this.memberIdValue === this.leaderIdValue;
  }
  get state(): MemberState {
    return this.stateValue;
  }
  /** What this member owns now. */
  get work(): WorkLoad {
    return loadOf(this.allocation.values());
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.lastContact = this.options.clock.now();
    this.loop = this.run();
    this.heartbeats = this.runHeartbeats();
  }

  /** Ask for a rebalance (new connectors or task configs to place, or a config mismatch). */
  requestRejoin(): void {
    this.rejoinNeeded = true;
    this.wakeUp?.();
  }

  /**
   * Ends the loop and leaves the group (LeaveGroup, so the others rebalance at once);
   * the herder should have stopped its work before. A JoinGroup parked in a
   * rebalance is cut short by closing the member's coordinator connection.
   */
  async stop(): Promise<void> {
    if (this.loop === undefined) return;
    const wasRunning = this.running;
    this.running = false;
    this.cancelScheduledRejoin?.();
    this.wakeUp?.();
    this.wakeHeartbeat?.();
    // Static members (group.instance.id) do not leave: a restart within the session
    // timeout then causes no rebalance at all, as with Kafka's own clients.
    const dynamic = (this.options.groupInstanceId ?? null) === null;
    if (wasRunning && dynamic && this.memberIdValue !== '') await this.leaveGroup();
    this.dropCoordinator();
    await Promise.all([this.loop, this.heartbeats]);
    this.stateValue = 'stopped';
  }

  private async leaveGroup(): Promise<void> {
    let conn: BrokerConnection | undefined;
    try {
      // A broker answers one connection's requests in order: behind a JoinGroup
      // parked in a rebalance, a LeaveGroup would wait for the whole rebalance.
      const own = this.inRebalance ? undefined : this.link.live;
      conn = own ?? (await this.link.openSeparate());
      await conn.request(
        ApiKey.LeaveGroup,
        {
          groupId: this.options.groupId,
          memberId: this.memberIdValue,
          members: [
            {
              memberId: this.memberIdValue,
              groupInstanceId: null,
              reason: 'the worker is shutting down',
            },
          ],
        },
        { timeoutMs: 5_000 },
      );
    } catch (err) {
      // The coordinator expires us after the session timeout anyway.
      this.options.logger.warn(
        { err: String(err) },
        'LeaveGroup failed; the session will time out',
      );
    } finally {
      if (conn !== undefined && conn !== this.link.live) conn.close();
    }
  }

  /**
   * The main loop: joins when needed, runs the herder's callbacks, and otherwise
   * wakes every heartbeat interval to act on what the heartbeat loop found.
   */
  private async run(): Promise<void> {
    while (this.running) {
      try {
        if (this.pendingFatal) throw this.pendingFatal;
        const loss = this.pendingLoss;
        this.pendingLoss = undefined;
        // A loss seen by a heartbeat of an older generation is stale: we rejoined since.
        if (loss && loss.generation === this.generationValue) {
          await this.loseMembership(loss.reason, loss.resetMemberId);
        }
        await this.checkSession();
        if (this.rejoinNeeded) {
          await this.joinAndSync();
        } else {
          // Wake for the next heartbeat's news, or exactly at the session deadline.
          const untilDeadline = this.sessionDeadline() - this.options.clock.now();
          await this.sleep(Math.max(1, Math.min(this.options.heartbeatIntervalMs, untilDeadline)));
        }
      } catch (err) {
        if (!this.running) break;
        if (err instanceof GroupMembershipError) {
          this.running = false;
          this.stateValue = 'stopped';
          this.wakeHeartbeat?.();
          this.dropCoordinator();
          this.options.logger.error({ err }, 'fatal group membership error');
          this.options.listener.onFatal?.(err);
          break;
        }
        this.options.logger.warn({ err: String(err) }, 'group request failed; retrying');
        this.dropCoordinator();
        this.options.client.invalidate();
        await this.sleep(this.retryBackoffMs);
      }
    }
  }

  /**
   * Heartbeats every heartbeat interval while the member is in a stable generation,
   * also while the herder's callbacks run (stopping tasks may take a while), so slow
   * callbacks do not cost the membership. What it learns goes to the main loop.
   */
  private async runHeartbeats(): Promise<void> {
    while (this.running) {
      await this.sleepHeartbeat(this.options.heartbeatIntervalMs);
      if (!this.running) break;
      if (this.stateValue !== 'stable' || this.rejoinNeeded) continue;
      const generation = this.generationValue;
      try {
        const conn = await this.coordinatorConnection();
        const sentAt = this.options.clock.now();
        const answer = await conn.request(
          ApiKey.Heartbeat,
          {
            groupId: this.options.groupId,
            generationId: generation,
            memberId: this.memberIdValue,
            groupInstanceId: this.options.groupInstanceId ?? null,
          },
          // Fail by the session deadline, so a silent coordinator cannot hide it.
          { timeoutMs: Math.max(1, this.sessionDeadline() - sentAt) },
        );
        if (generation !== this.generationValue) continue;
        this.onHeartbeatAnswer(answer.errorCode as number, sentAt, generation);
      } catch (err) {
        if (!this.running) break;
        this.options.logger.warn({ err: String(err) }, 'heartbeat failed');
        this.dropCoordinator();
        this.options.client.invalidate();
      }
    }
  }

  private onHeartbeatAnswer(code: number, sentAt: number, generation: number): void {
    if (code === 0) {
      this.lastContact = sentAt;
    } else if (code === ErrorCode.REBALANCE_IN_PROGRESS) {
      this.lastContact = sentAt;
      this.requestRejoin();
    } else if (code === ErrorCode.UNKNOWN_MEMBER_ID || code === ErrorCode.ILLEGAL_GENERATION) {
      this.pendingLoss = {
        reason:
          code === ErrorCode.UNKNOWN_MEMBER_ID
            ? `Heartbeat: the coordinator no longer knows member ${this.memberIdValue}`
            : `Heartbeat: generation ${generation} is no longer current`,
        resetMemberId: code === ErrorCode.UNKNOWN_MEMBER_ID,
        generation,
      };
      this.wakeUp?.();
    } else if (COORDINATOR_ERRORS.has(code)) {
      this.dropCoordinator();
    } else if (code === ErrorCode.FENCED_INSTANCE_ID) {
      this.pendingFatal = new GroupMembershipError(
        `Heartbeat for group ${this.options.groupId} failed: group.instance.id ${this.options.groupInstanceId} is used by another worker`,
        code,
      );
      this.wakeUp?.();
    } else {
      this.options.logger.warn({ code }, 'heartbeat refused; rejoining');
      this.requestRejoin();
    }
  }

  /**
   * When the member gives up on its session: a little before the coordinator can
   * (its clock starts when it received our last answered request, after we sent it),
   * so the slack of waking up and of the coordinator's own timer cannot invert the
   * order.
   */
  private sessionDeadline(): number {
    const margin = Math.min(this.options.heartbeatIntervalMs, this.options.sessionTimeoutMs / 10);
    return this.lastContact + this.options.sessionTimeoutMs - margin;
  }

  /** Drops all work once the coordinator has not answered until the session deadline. */
  private async checkSession(): Promise<void> {
    if (this.options.clock.now() < this.sessionDeadline()) return;
    if (this.generationValue === NO_GENERATION && this.allocation.size === 0) return;
    await this.loseMembership(
      'no answer from the group coordinator within session.timeout.ms',
      false,
    );
  }

  private async loseMembership(reason: string, resetMemberId: boolean): Promise<void> {
    if (resetMemberId) this.memberIdValue = '';
    this.rejoinNeeded = true;
    if (this.generationValue === NO_GENERATION && this.allocation.size === 0) {
      // Already dropped everything (e.g. the coordinator expired us meanwhile): just rejoin.
      this.options.logger.info({ reason }, 'rejoining the group as a new member');
      return;
    }
    const work = this.work;
    this.allocation.clear();
    this.lastAssignment = null;
    this.generationValue = NO_GENERATION;
    this.leaderIdValue = '';
    this.leaderUrlValue = '';
    this.stateValue = 'unjoined';
    this.options.logger.warn({ reason, memberId: this.memberIdValue }, 'group membership lost');
    await this.options.listener.onMembershipLost(work, reason);
  }

  /** The coordinator connection; a member holding work gives up at its session deadline. */
  private async coordinatorConnection(): Promise<BrokerConnection> {
    const holding = this.generationValue !== NO_GENERATION || this.allocation.size > 0;
    const conn = await this.link.connection(holding ? this.sessionDeadline() : undefined);
    if (!this.running) {
      this.link.drop(); // opened while stop() ran: stop() has already dropped its link
      throw new Error('member stopped');
    }
    return conn;
  }

  private dropCoordinator(): void {
    this.link.drop();
  }

  private async joinAndSync(): Promise<void> {
    this.stateValue = 'joining';
    this.options.listener.onJoinPrepare?.();
    this.cancelScheduledRejoin?.();
    if (this.protocol === 'default' && this.allocation.size > 0) {
      // Eager protocol: give everything up before joining.
      const work = this.work;
      await this.options.listener.onRevoked(work);
      this.allocation.clear();
    }
    const conn = await this.coordinatorConnection();
    const sentAt = this.options.clock.now();
    this.inRebalance = true;
    const joined = await conn
      .request(
        ApiKey.JoinGroup,
        {
          groupId: this.options.groupId,
          sessionTimeoutMs: this.options.sessionTimeoutMs,
          rebalanceTimeoutMs: this.options.rebalanceTimeoutMs,
          memberId: this.memberIdValue,
          groupInstanceId: this.options.groupInstanceId ?? null,
          protocolType: CONNECT_PROTOCOL_TYPE,
          protocols: joinProtocols(this.mode, {
            url: this.options.url,
            configOffset: this.options.configOffset(),
            allocation: this.currentAllocation(),
          }),
          reason: null,
        },
        { timeoutMs: this.options.rebalanceTimeoutMs + JOIN_REQUEST_SLACK_MS },
      )
      .finally(() => {
        this.inRebalance = false;
      });
    if (!this.running) return;
    const code = joined.errorCode as number;
    if (code === ErrorCode.MEMBER_ID_REQUIRED) {
      this.memberIdValue = joined.memberId as string;
      this.lastContact = sentAt;
      return; // rejoin at once with the id
    }
    if (code !== 0) return this.handleGroupError(code, 'JoinGroup', sentAt);
    this.lastContact = sentAt;
    this.memberIdValue = joined.memberId as string;
    this.generationValue = joined.generationId as number;
    this.leaderIdValue = joined.leader as string;
    this.protocol = joined.protocolName as string;
    const version = protocolVersionOf(this.protocol);
    if (version === undefined) {
      throw new GroupMembershipError(`the group chose unknown protocol ${this.protocol}`, -1);
    }

    let assignments: Array<{ memberId: string; assignment: Buffer }> = [];
    // KIP-814: a static leader rejoining an unchanged group is told not to assign.
    if (this.isLeader && joined.skipAssignment !== true) {
      assignments = await this.performAssignment(joined.members as Message[], version);
    }
    if (!this.running) return;

    const syncSentAt = this.options.clock.now();
    this.inRebalance = true;
    const synced = await conn
      .request(
        ApiKey.SyncGroup,
        {
          groupId: this.options.groupId,
          generationId: this.generationValue,
          memberId: this.memberIdValue,
          groupInstanceId: this.options.groupInstanceId ?? null,
          protocolType: CONNECT_PROTOCOL_TYPE,
          protocolName: this.protocol,
          assignments,
        },
        { timeoutMs: this.options.rebalanceTimeoutMs + JOIN_REQUEST_SLACK_MS },
      )
      .finally(() => {
        this.inRebalance = false;
      });
    if (!this.running) return;
    const syncCode = synced.errorCode as number;
    if (syncCode !== 0) return this.handleGroupError(syncCode, 'SyncGroup', syncSentAt);
    this.lastContact = syncSentAt;
    this.lastCompletedGeneration = this.generationValue;
    await this.applyAssignment(decodeAssignment(synced.assignment as Buffer), version);
  }

  private async performAssignment(
    members: Message[],
    version: number,
  ): Promise<Array<{ memberId: string; assignment: Buffer }>> {
    const decoded = decodeMembers(
      members.map((m) => ({ memberId: m.memberId as string, metadata: m.metadata as Buffer })),
    );
    const snapshot = await this.options.listener.leaderSnapshot(maxConfigOffset(decoded));
    const result = groupAssignment({
      members: decoded,
      leaderId: this.memberIdValue,
      leaderUrl: this.options.url,
      version,
      snapshot,
      generation: this.generationValue,
      lastCompletedGeneration: this.lastCompletedGeneration,
      now: this.options.clock.now(),
      maxDelayMs: this.options.maxDelayMs,
      state: this.assignorState,
      released: this.options.listener.released?.bind(this.options.listener),
    });
    this.options.logger.debug(
      {
        generation: this.generationValue,
        members: decoded.map((m) => m.memberId),
        configMismatch: result.configMismatch,
        held: result.state.held.size,
        delay: result.delay,
      },
      'computed assignments',
    );
    this.assignorState = result.state;
    return result.assignments;
  }

  private async applyAssignment(a: ConnectAssignment, version: number): Promise<void> {
    this.leaderIdValue = a.leader;
    this.leaderUrlValue = a.leaderUrl;
    this.rejoinNeeded = false;
    this.stateValue = 'stable';
    if (a.error !== ASSIGNMENT_NO_ERROR) {
      await this.options.listener.onAssigned(this.event(a, { connectors: [], tasks: [] }));
      this.rejoinNeeded = true;
      return;
    }
    const revoked: WorkLoad = { connectors: a.revokedConnectors, tasks: a.revokedTasks };
    if (revoked.connectors.length + revoked.tasks.length > 0) {
      await this.options.listener.onRevoked(revoked);
      for (const c of revoked.connectors) this.allocation.delete(connectorKey(c));
      for (const t of revoked.tasks) this.allocation.delete(taskKey(t));
      // Let the follow-up rebalance place what was just given up.
      this.rejoinNeeded = true;
    }
    for (const c of a.connectors) this.allocation.set(connectorKey(c), { connector: c });
    for (const t of a.tasks)
      this.allocation.set(taskKey(t), { connector: t.connector, task: t.task });
    this.lastAssignment = a;
    await this.options.listener.onAssigned(
      this.event(a, { connectors: a.connectors, tasks: a.tasks }),
    );
    if (a.delay > 0 && version > CONNECT_PROTOCOL_V0) {
      this.cancelScheduledRejoin = this.options.timers.schedule(a.delay, () =>
        this.requestRejoin(),
      );
    }
  }

  private event(a: ConnectAssignment, assigned: WorkLoad): AssignmentEvent {
    return {
      generation: this.generationValue,
      memberId: this.memberIdValue,
      leaderId: a.leader,
      leaderUrl: a.leaderUrl,
      configOffset: a.configOffset,
      error: a.error,
      protocol: this.protocol,
      assigned,
      allocation: this.work,
      delay: a.delay,
    };
  }

  /** The allocation as Connect embeds it in v1+ metadata: null when nothing is owned. */
  private currentAllocation(): ConnectAssignment | null {
    if (this.allocation.size === 0 || this.lastAssignment === null) return null;
    const work = this.work;
    return {
      ...this.lastAssignment,
      connectors: work.connectors,
      tasks: work.tasks,
      revokedConnectors: [],
      revokedTasks: [],
      delay: 0,
    };
  }

  private async handleGroupError(code: number, api: string, sentAt: number): Promise<void> {
    if (code === ErrorCode.REBALANCE_IN_PROGRESS) {
      this.lastContact = sentAt;
      this.rejoinNeeded = true;
      return;
    }
    if (code === ErrorCode.UNKNOWN_MEMBER_ID) {
      await this.loseMembership(
        `${api}: the coordinator no longer knows member ${this.memberIdValue}`,
        true,
      );
      return;
    }
    if (code === ErrorCode.ILLEGAL_GENERATION) {
      await this.loseMembership(
        `${api}: generation ${this.generationValue} is no longer current`,
        false,
      );
      return;
    }
    if (COORDINATOR_ERRORS.has(code)) {
      this.dropCoordinator();
      this.rejoinNeeded = true;
      await this.sleep(this.retryBackoffMs);
      return;
    }
    if (
      code === ErrorCode.FENCED_INSTANCE_ID ||
      code === ErrorCode.INCONSISTENT_GROUP_PROTOCOL ||
      code === ErrorCode.GROUP_AUTHORIZATION_FAILED ||
      code === ErrorCode.INVALID_SESSION_TIMEOUT ||
      code === ErrorCode.GROUP_MAX_SIZE_REACHED
    ) {
      throw new GroupMembershipError(
        `${api} for group ${this.options.groupId} failed with error ${code}`,
        code,
      );
    }
    this.options.logger.warn({ api, code }, 'group request refused; retrying');
    this.rejoinNeeded = true;
    await this.sleep(this.retryBackoffMs);
  }

  private sleepHeartbeat(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        cancel();
        this.wakeHeartbeat = undefined;
        resolve();
      };
      const cancel = this.options.timers.schedule(ms, done);
      this.wakeHeartbeat = done;
    });
  }

  /** Waits on the injected timers; requestRejoin() and stop() end the wait early. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        cancel();
        this.wakeUp = undefined;
        resolve();
      };
      const cancel = this.options.timers.schedule(ms, done);
      this.wakeUp = done;
    });
  }
}

function loadOf(items: Iterable<WorkItem>): WorkLoad {
  const load: WorkLoad = { connectors: [], tasks: [] };
  for (const item of items) {
    if (item.task === undefined) load.connectors.push(item.connector);
    else load.tasks.push({ connector: item.connector, task: item.task });
  }
  load.connectors.sort();
  load.tasks.sort((a, b) =>
    a.connector === b.connector ? a.task - b.task : a.connector < b.connector ? -1 : 1,
  );
  return load;
}

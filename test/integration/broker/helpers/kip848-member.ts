/**
 * A consumer group member of the KIP-848 protocol, built on this project's codec, that
 * behaves as the Java 4.x consumer's membership manager does (Debian's librdkafka 2.0
 * predates the protocol): it joins with epoch 0 and its subscription, reports the
 * partitions it owns on every heartbeat, revokes what an answer no longer assigns at
 * once, takes up what it is given, and commits offsets with OffsetCommit v9 carrying
 * its member epoch, and fetches them with OffsetFetch v9 as itself. Heartbeats are sent when the test asks (`heartbeat()`), so tests
 * drive the protocol step by step without timers.
 */
import { ApiKey } from '../../../../src/protocol/api-keys.ts';
import { BrokerConnection } from '../../../../src/protocol/client/broker-connection.ts';
import type { Message } from '../../../../src/protocol/codec.ts';

export interface Kip848MemberOptions {
  groupId: string;
  topics?: string[];
  regex?: string;
  instanceId?: string;
  serverAssignor?: string;
  /** KIP-1082: the member names itself; otherwise the coordinator does. */
  memberId?: string;
}

export class Kip848Member {
  memberId: string;
  memberEpoch = 0;
  /** topic id -> partitions this member owns (has taken up and not revoked). */
  owned = new Map<string, number[]>();
  lastError = 0;

  private constructor(
    readonly connection: BrokerConnection,
    private readonly options: Kip848MemberOptions,
  ) {
    this.memberId = options.memberId ?? '';
  }

  static async connect(bootstrap: string, options: Kip848MemberOptions): Promise<Kip848Member> {
    const [host, port] = bootstrap.split(':');
    const connection = await BrokerConnection.connect(host!, Number(port), {
      clientId: 'kip848-test',
    });
    return new Kip848Member(connection, options);
  }

  /** One heartbeat; the first (epoch 0) carries the whole member state. */
  async heartbeat(): Promise<Message> {
    const joining = this.memberEpoch === 0;
    const answer = await this.connection.request(ApiKey.ConsumerGroupHeartbeat, {
      groupId: this.options.groupId,
      memberId: this.memberId,
      memberEpoch: this.memberEpoch,
      instanceId: this.options.instanceId ?? null,
      rackId: null,
      rebalanceTimeoutMs: joining ? 300_000 : -1,
      subscribedTopicNames: joining ? (this.options.topics ?? []) : null,
      subscribedTopicRegex: joining ? (this.options.regex ?? null) : null,
      serverAssignor: joining ? (this.options.serverAssignor ?? null) : null,
      topicPartitions: [...this.owned].map(([topicId, partitions]) => ({ topicId, partitions })),
    });
    this.lastError = answer.errorCode;
    if (answer.errorCode !== 0) {
      if (answer.errorCode === 110 || answer.errorCode === 25) {
        // FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID: give everything up and rejoin.
        this.owned.clear();
        this.memberEpoch = 0;
      }
      return answer;
    }
    if (answer.memberId) this.memberId = answer.memberId;
    this.memberEpoch = answer.memberEpoch;
    if (answer.assignment) {
      // Revoke what is no longer assigned, take up what is (the client's reconciliation).
      this.owned = new Map(
        (answer.assignment.topicPartitions as Message[]).map((t) => [
          t.topicId,
          [...t.partitions].sort(),
        ]),
      );
    }
    return answer;
  }

  /** Heartbeats until an answer leaves the member's epoch and assignment as they were. */
  async settle(): Promise<void> {
    for (let i = 0; i < 20; i++) {
      const before = `${this.memberEpoch}/${JSON.stringify([...this.owned])}`;
      await this.heartbeat();
      if (`${this.memberEpoch}/${JSON.stringify([...this.owned])}` === before) return;
    }
  }

  ownedPartitions(): number[] {
    return [...this.owned.values()].flat().sort((a, b) => a - b);
  }

  async leave(): Promise<Message> {
    const answer = await this.connection.request(ApiKey.ConsumerGroupHeartbeat, {
      groupId: this.options.groupId,
      memberId: this.memberId,
      memberEpoch: this.options.instanceId ? -2 : -1,
      instanceId: this.options.instanceId ?? null,
    });
    this.owned.clear();
    return answer;
  }

  /** OffsetCommit v9, the member epoch in the generation field. */
  async commit(
    topic: string,
    partition: number,
    offset: number,
    epoch = this.memberEpoch,
  ): Promise<number> {
    const answer = await this.connection.request(
      ApiKey.OffsetCommit,
      {
        groupId: this.options.groupId,
        generationId: epoch,
        memberId: this.memberId,
        groupInstanceId: this.options.instanceId ?? null,
        topics: [
          {
            name: topic,
            partitions: [
              {
                partitionIndex: partition,
                committedOffset: BigInt(offset),
                committedLeaderEpoch: -1,
                committedMetadata: null,
              },
            ],
          },
        ],
      },
      { version: 9 },
    );
    return answer.topics[0].partitions[0].errorCode;
  }

  /**
   * OffsetFetch v9 for one topic's partitions, as this member (its id and epoch) unless
   * `as` names another member id and epoch (null and -1: as an admin client does).
   */
  async fetchOffsets(
    topic: string,
    partitions: number[],
    as: { memberId: string | null; memberEpoch: number } = {
      memberId: this.memberId,
      memberEpoch: this.memberEpoch,
    },
  ): Promise<Message> {
    const answer = await this.connection.request(
      ApiKey.OffsetFetch,
      {
        groups: [
          {
            groupId: this.options.groupId,
            memberId: as.memberId,
            memberEpoch: as.memberEpoch,
            topics: [{ name: topic, partitionIndexes: partitions }],
          },
        ],
        requireStable: true,
      },
      { version: 9 },
    );
    return answer.groups[0];
  }

  close(): void {
    this.connection.close();
  }
}

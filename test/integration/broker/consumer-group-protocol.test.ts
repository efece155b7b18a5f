/**
 * The consumer group protocol (KIP-848) over the wire against the embedded broker, with
 * a member built on the project's codec that speaks it as the Java 4.x consumer does
 * (helpers/kip848-member.ts): advertised APIs, server-side assignment reconciled with
 * revocation first, offsets committed with member epochs (OffsetCommit v9) and fetched
 * as the member (OffsetFetch v9), the group seen by ConsumerGroupDescribe, ListGroups
 * and DescribeGroups, leaving, and a classic JoinGroup refused for the group's id. kafkajs (an independent client) creates topics.
 */
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ApiKey } from '../../../src/protocol/api-keys.ts';
import { BrokerConnection } from '../../../src/protocol/client/broker-connection.ts';
import type { Message } from '../../../src/protocol/codec.ts';
import { decodeAssignment } from '../../../src/protocol/consumer-protocol.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { kafka } from '../../conformance/helpers/kafkajs.ts';
import { startTestBroker, type TestBroker, useBroker } from '../../helpers/broker.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { Kip848Member, type Kip848MemberOptions } from './helpers/kip848-member.ts';

let broker: TestBroker;
let admin: Admin;

beforeAll(async () => {
  // Kafka's default, bidirectional, would let a classic member join a consumer group
  // (consumer-group-migration.test.ts); these tests keep the protocols apart.
  broker = await startTestBroker({ config: { 'group.consumer.migration.policy': 'disabled' } });
  admin = kafka(broker.bootstrap).admin();
  await admin.connect();
});

afterAll(async () => {
  await admin?.disconnect();
  await broker?.stop();
});

let unique = 0;
const fresh = (prefix: string) => `${prefix}-${++unique}-${process.pid}`;

async function member(options: Kip848MemberOptions): Promise<Kip848Member> {
  const m = await Kip848Member.connect(broker.bootstrap, options);
  onTestFinished(() => m.close());
  return m;
}

async function connection(): Promise<BrokerConnection> {
  const [host, port] = broker.bootstrap.split(':');
  const c = await BrokerConnection.connect(host!, Number(port), { clientId: 'kip848-admin' });
  onTestFinished(() => c.close());
  return c;
}

describe('the consumer group protocol over the wire', () => {
  it('is advertised: ConsumerGroupHeartbeat v0-1, ConsumerGroupDescribe v0, OffsetCommit and OffsetFetch up to v9', async () => {
    const c = await connection();
    expect(c.versionFor(ApiKey.ConsumerGroupHeartbeat)).toBe(1);
    expect(c.versionFor(ApiKey.ConsumerGroupDescribe)).toBe(0);
    expect(c.versionFor(ApiKey.OffsetCommit)).toBe(9);
    expect(c.versionFor(ApiKey.OffsetFetch)).toBe(9);
  });

  it('splits a topic between two members, the second getting partitions once the first revoked them', async () => {
    const topic = fresh('kip848');
    const groupId = fresh('group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 4 }] });
    const a = await member({ groupId, topics: [topic] });
    await a.settle();
    expect(a.ownedPartitions()).toEqual([0, 1, 2, 3]);
    const b = await member({ groupId, topics: [topic] });
    await b.heartbeat();
    expect(b.ownedPartitions()).toEqual([]);
    await a.settle();
    await b.settle();
    expect(a.ownedPartitions()).toHaveLength(2);
    expect([...a.ownedPartitions(), ...b.ownedPartitions()].sort()).toEqual([0, 1, 2, 3]);
    expect(a.memberEpoch).toBe(b.memberEpoch);

    const c = await connection();
    const described = (
      await c.request(ApiKey.ConsumerGroupDescribe, {
        groupIds: [groupId],
        includeAuthorizedOperations: false,
      })
    ).groups[0];
    expect(described).toMatchObject({
      errorCode: 0,
      groupState: 'Stable',
      assignorName: 'uniform',
    });
    const described0 = (described.members as Message[]).find((m) => m.memberId === a.memberId)!;
    expect(described0.assignment.topicPartitions[0].topicName).toBe(topic);
    expect(described0.subscribedTopicNames).toEqual([topic]);

    const listed = (await c.request(ApiKey.ListGroups, {})).groups as Message[];
    expect(listed.find((g) => g.groupId === groupId)).toMatchObject({ protocolType: 'consumer' });
    const classicView = (await c.request(ApiKey.DescribeGroups, { groups: [groupId] })).groups[0];
    expect(classicView).toMatchObject({
      errorCode: 0,
      groupState: 'Stable',
      protocolType: 'consumer',
      protocolData: 'uniform',
    });
    const bView = (classicView.members as Message[]).find((m) => m.memberId === b.memberId)!;
    expect(decodeAssignment(Buffer.from(bView.memberAssignment))).toEqual([
      { topic, partitions: b.ownedPartitions() },
    ]);

    expect((await a.leave()).errorCode).toBe(0);
    await b.settle();
    expect(b.ownedPartitions()).toEqual([0, 1, 2, 3]);
  });

  it('commits offsets with the member epoch and refuses a stale one', async () => {
    const topic = fresh('kip848-commit');
    const groupId = fresh('group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    const a = await member({ groupId, topics: [topic] });
    await a.settle();
    expect(await a.commit(topic, 0, 42)).toBe(ErrorCode.NONE);
    const stale = a.memberEpoch;
    const b = await member({ groupId, topics: [topic] });
    await b.heartbeat();
    await a.settle();
    expect(a.memberEpoch).toBeGreaterThan(stale);
    expect(await a.commit(topic, 1, 7, stale)).toBe(ErrorCode.STALE_MEMBER_EPOCH);
    const fetched = await admin.fetchOffsets({ groupId, topics: [topic] });
    expect(fetched[0]!.partitions.find((p) => p.partition === 0)!.offset).toBe('42');
  });

  it('answers OffsetFetch v9 to the member at its epoch and to admins, refusing unknown members and other epochs for the whole group', async () => {
    const topic = fresh('kip848-fetch');
    const groupId = fresh('group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    const a = await member({ groupId, topics: [topic] });
    await a.settle();
    expect(await a.commit(topic, 0, 42)).toBe(ErrorCode.NONE);
    const offsets = (g: Message) =>
      (g.topics as Message[]).flatMap((t) =>
        (t.partitions as Message[]).map((p) => [p.partitionIndex, p.committedOffset, p.errorCode]),
      );
    const own = await a.fetchOffsets(topic, [0, 1]);
    expect(own.errorCode).toBe(ErrorCode.NONE);
    expect(offsets(own)).toEqual([
      [0, 42n, 0],
      [1, -1n, 0],
    ]);
    const asAdmin = await a.fetchOffsets(topic, [0], { memberId: null, memberEpoch: -1 });
    expect([asAdmin.errorCode, offsets(asAdmin)]).toEqual([ErrorCode.NONE, [[0, 42n, 0]]]);
    const refused = async (memberId: string | null, memberEpoch: number) => {
      const g = await a.fetchOffsets(topic, [0], { memberId, memberEpoch });
      return [g.errorCode, g.topics];
    };
    expect(await refused('not-a-member', a.memberEpoch)).toEqual([ErrorCode.UNKNOWN_MEMBER_ID, []]);
    // Only a null member id is an admin's: an empty one names no member.
    expect(await refused('', -1)).toEqual([ErrorCode.UNKNOWN_MEMBER_ID, []]);
    expect(await refused(null, a.memberEpoch)).toEqual([ErrorCode.UNKNOWN_MEMBER_ID, []]);
    expect(await refused(a.memberId, a.memberEpoch - 1)).toEqual([
      ErrorCode.STALE_MEMBER_EPOCH,
      [],
    ]);
    expect(await refused(a.memberId, a.memberEpoch + 1)).toEqual([
      ErrorCode.STALE_MEMBER_EPOCH,
      [],
    ]);
  });

  it("refuses a classic JoinGroup for the group's id while it has members, with the migration disabled", async () => {
    const topic = fresh('kip848-classic');
    const groupId = fresh('group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    const a = await member({ groupId, topics: [topic] });
    await a.settle();
    const c = await connection();
    const joined = await c.request(ApiKey.JoinGroup, {
      groupId,
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      reason: null,
    });
    expect(joined.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  });

  it('keeps the offsets of subscribed topics from OffsetDelete and the group from DeleteGroups while it has members', async () => {
    const topic = fresh('kip848-delete');
    const other = fresh('kip848-other');
    const groupId = fresh('group');
    await admin.createTopics({
      topics: [
        { topic, numPartitions: 1 },
        { topic: other, numPartitions: 1 },
      ],
    });
    const a = await member({ groupId, topics: [topic] });
    await a.settle();
    expect(await a.commit(topic, 0, 3)).toBe(ErrorCode.NONE);
    expect(await a.commit(other, 0, 4)).toBe(ErrorCode.NONE);
    const c = await connection();
    const deleted = await c.request(ApiKey.OffsetDelete, {
      groupId,
      topics: [
        { name: topic, partitions: [{ partitionIndex: 0 }] },
        { name: other, partitions: [{ partitionIndex: 0 }] },
      ],
    });
    expect(deleted.errorCode).toBe(0);
    expect(deleted.topics.map((t: Message) => t.partitions[0].errorCode)).toEqual([
      ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
      ErrorCode.NONE,
    ]);
    const deleteGroup = async () =>
      (await c.request(ApiKey.DeleteGroups, { groupsNames: [groupId] })).results[0].errorCode;
    expect(await deleteGroup()).toBe(ErrorCode.NON_EMPTY_GROUP);
    await a.leave();
    expect(await deleteGroup()).toBe(ErrorCode.NONE);
    const described = await c.request(ApiKey.ConsumerGroupDescribe, {
      groupIds: [groupId],
      includeAuthorizedOperations: true,
    });
    expect(described.groups[0].errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });

  it('keeps the group across a broker restart: members carry on with their epochs, and a deleted group stays deleted', async () => {
    const dataDir = useTmpDir('kip848-restart-');
    const first = await useBroker({ dataDir });
    const firstAdmin = kafka(first.bootstrap).admin();
    await firstAdmin.connect();
    onTestFinished(() => firstAdmin.disconnect());
    await firstAdmin.createTopics({ topics: [{ topic: 'restarted', numPartitions: 2 }] });
    const connect = async (bootstrap: string, groupId: string) => {
      const m = await Kip848Member.connect(bootstrap, { groupId, topics: ['restarted'] });
      onTestFinished(() => m.close());
      return m;
    };
    const a = await connect(first.bootstrap, 'kept');
    const b = await connect(first.bootstrap, 'kept');
    await a.settle();
    await b.settle();
    await a.settle();
    const gone = await connect(first.bootstrap, 'deleted');
    await gone.settle();
    await gone.leave();
    const c = await BrokerConnection.connect('127.0.0.1', first.port, { clientId: 'kip848-admin' });
    onTestFinished(() => c.close());
    expect(
      (await c.request(ApiKey.DeleteGroups, { groupsNames: ['deleted'] })).results[0].errorCode,
    ).toBe(ErrorCode.NONE);
    await firstAdmin.disconnect();
    await first.stop();

    const second = await useBroker({ dataDir });
    const again = async (before: Kip848Member) => {
      const m = await connect(second.bootstrap, 'kept');
      Object.assign(m, {
        memberId: before.memberId,
        memberEpoch: before.memberEpoch,
        owned: new Map(before.owned),
      });
      return m;
    };
    const a2 = await again(a);
    const b2 = await again(b);
    const answer = await a2.heartbeat();
    // Same epoch, nothing to reconcile: no new assignment, no rebalance from scratch.
    expect([answer.errorCode, answer.memberEpoch, answer.assignment]).toEqual([0, 2, null]);
    expect((await b2.heartbeat()).errorCode).toBe(0);
    expect([a2.memberEpoch, b2.memberEpoch]).toEqual([2, 2]);
    const c2 = await BrokerConnection.connect('127.0.0.1', second.port, {
      clientId: 'kip848-admin',
    });
    onTestFinished(() => c2.close());
    const described = await c2.request(ApiKey.ConsumerGroupDescribe, {
      groupIds: ['kept', 'deleted'],
      includeAuthorizedOperations: false,
    });
    expect(described.groups.map((g: Message) => [g.errorCode, g.groupEpoch])).toEqual([
      [ErrorCode.NONE, 2],
      [ErrorCode.GROUP_ID_NOT_FOUND, -1],
    ]);
  });

  it('subscribes by regex to the topics whose whole name matches', async () => {
    const prefix = fresh('kip848-re');
    await admin.createTopics({
      topics: [
        { topic: `${prefix}-a`, numPartitions: 1 },
        { topic: `${prefix}-b`, numPartitions: 1 },
        { topic: `x${prefix}`, numPartitions: 1 },
      ],
    });
    const a = await member({ groupId: fresh('group'), regex: `${prefix}-.*` });
    await a.settle();
    expect(a.ownedPartitions()).toEqual([0, 0]);
  });
});

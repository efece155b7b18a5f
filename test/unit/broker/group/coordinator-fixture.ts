/**
 * A GroupCoordinator on manual timers, JoinGroup requests as a v4+ client sends them
 * and ConsumerGroupHeartbeat requests (KIP-848), shared by the coordinator's unit tests.
 */
import { expect } from 'vitest';
import type { HeartbeatRequest } from '../../../../src/broker/group/consumer-group/consumer-group-coordinator.ts';
import type { MigrationPolicy } from '../../../../src/broker/group/consumer-group/migration.ts';
import type { JoinResult } from '../../../../src/broker/group/group.ts';
import {
  GroupCoordinator,
  type JoinRequest,
} from '../../../../src/broker/group/group-coordinator.ts';
import { getLogger } from '../../../../src/util/logger.ts';
import { ManualTimers } from '../../../../src/util/timers.ts';

export function setup(initialRebalanceDelayMs = 0, consumerMigrationPolicy?: MigrationPolicy) {
  const timers = new ManualTimers();
  const coordinator = new GroupCoordinator({
    clock: timers.clock,
    timers,
    logger: getLogger('test.group'),
    minSessionTimeoutMs: 6000,
    maxSessionTimeoutMs: 300000,
    initialRebalanceDelayMs,
    offsetsRetentionMs: 7 * 24 * 3600 * 1000,
    maxMetadataBytes: 4096,
    consumerMigrationPolicy,
  });
  return { timers, coordinator };
}

export function joinRequest(over: Partial<JoinRequest> = {}): JoinRequest {
  return {
    groupId: 'g',
    memberId: '',
    groupInstanceId: null,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('m') }],
    sessionTimeoutMs: 10000,
    rebalanceTimeoutMs: 30000,
    requireKnownMemberId: true,
    ...over,
  };
}

/** A ConsumerGroupHeartbeat: a new member of group g joining with a subscription to t, as `over` changes it. */
export function heartbeatRequest(over: Partial<HeartbeatRequest> = {}): HeartbeatRequest {
  return {
    groupId: 'g',
    memberId: '',
    memberEpoch: 0,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: 60_000,
    subscribedTopicNames: ['t'],
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: [],
    clientId: 'c',
    clientHost: '/127.0.0.1',
    ...over,
  };
}

/**
 * A member's heartbeat by its epoch: joining (epoch 0) with its subscription to t, or
 * steady, reporting the partitions of `topicId` it owns (null: unchanged since the last).
 */
export function memberHeartbeat(
  memberId: string,
  memberEpoch: number,
  owned: number[] | null,
  { groupId = 'g', topicId = '' }: { groupId?: string; topicId?: string } = {},
): HeartbeatRequest {
  const joining = memberEpoch === 0;
  return heartbeatRequest({
    groupId,
    memberId,
    memberEpoch,
    rebalanceTimeoutMs: joining ? 60_000 : -1,
    subscribedTopicNames: joining ? ['t'] : null,
    topicPartitions:
      owned === null ? null : owned.length === 0 ? [] : [{ topicId, partitions: owned }],
  });
}

/** Joins the way a v4+ client does: first learn the member id, then join with it. */
export async function joinFresh(
  c: GroupCoordinator,
  over: Partial<JoinRequest> = {},
): Promise<{ memberId: string; joined: Promise<JoinResult> }> {
  const first = await c.join(joinRequest(over));
  expect(first.error).toBe('MEMBER_ID_REQUIRED');
  return {
    memberId: first.memberId,
    joined: c.join(joinRequest({ ...over, memberId: first.memberId })),
  };
}

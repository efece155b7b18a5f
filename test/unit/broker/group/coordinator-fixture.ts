/**
 * A GroupCoordinator on manual timers, and JoinGroup requests as a v4+ client sends
 * them, shared by the coordinator's unit tests.
 */
import { expect } from 'vitest';
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

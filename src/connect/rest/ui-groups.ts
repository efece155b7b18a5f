/**
 * Consumer groups as the status page shows them: every group of the cluster with its
 * state, protocol, members (client id, host, and for `consumer` groups the partitions
 * assigned), and for groups with committed offsets the lag per partition (end offset
 * minus committed offset). Sink connectors' groups (connect-<name>) and the workers'
 * own `connect` group are among them.
 *
 * Groups live on their coordinators, which are the leaders of __consumer_offsets'
 * partitions: ListGroups goes to each of those brokers, DescribeGroups and OffsetFetch
 * to the broker that listed the group. Read-only: nothing joins or commits.
 */
import { ApiKey } from '../../protocol/api-keys.ts';
import type { BrokerConnection } from '../../protocol/client/broker-connection.ts';
import { type ClusterClient, KafkaResponseError } from '../../protocol/client/cluster-client.ts';
import type { Message } from '../../protocol/codec.ts';
import { CONSUMER_PROTOCOL_TYPE, decodeAssignment } from '../../protocol/consumer-protocol.ts';
import type { GroupList, GroupMember, GroupPartitionLag, GroupSummary } from './ui-api-types.ts';
import { LATEST, offsetsAt, partitionKey } from './ui-topics.ts';

const OFFSETS_TOPIC = '__consumer_offsets';
/** Groups described in one answer; a cluster with more says how many it left out. */
export const GROUPS_MAX = 200;

export async function listGroupsWithLag(client: ClusterClient): Promise<GroupList> {
  const [offsetsTopic] = await client.metadata([OFFSETS_TOPIC]);
  const coordinators = new Set(
    offsetsTopic?.errorCode === 0 ? offsetsTopic.partitions.map((p) => p.leader) : [],
  );
  const listed: Array<{ conn: BrokerConnection; groupId: string }> = [];
  for (const node of coordinators) {
    if (node < 0) continue;
    const conn = await client.connectionToNode(node);
    const answer = await conn.request(ApiKey.ListGroups, { statesFilter: [] });
    if (answer.errorCode)
      throw new KafkaResponseError(answer.errorCode, `listing the groups of broker ${node}`);
    for (const g of answer.groups as Message[]) listed.push({ conn, groupId: g.groupId });
  }
  listed.sort((a, b) => a.groupId.localeCompare(b.groupId));
  const shown = listed.slice(0, GROUPS_MAX);
  const groups = await Promise.all(shown.map((g) => describeGroup(client, g.conn, g.groupId)));
  return { groups, omitted: listed.length - shown.length };
}

async function describeGroup(
  client: ClusterClient,
  conn: BrokerConnection,
  groupId: string,
): Promise<GroupSummary> {
  const answer = await conn.request(ApiKey.DescribeGroups, {
    groups: [groupId],
    includeAuthorizedOperations: false,
  });
  const g = (answer.groups as Message[])[0]!;
  if (g.errorCode) throw new KafkaResponseError(g.errorCode, `describing group ${groupId}`);
  const consumer = g.protocolType === CONSUMER_PROTOCOL_TYPE;
  const members = (g.members as Message[]).map((m) => ({
    memberId: m.memberId as string,
    clientId: m.clientId as string,
    clientHost: m.clientHost as string,
    assignment: consumer ? assignmentOf(m.memberAssignment as Buffer) : [],
  }));
  const offsets = await lagOf(client, conn, groupId);
  return {
    groupId,
    state: g.groupState as string,
    protocolType: g.protocolType as string,
    protocol: g.protocolData as string,
    members,
    offsets,
    totalLag: offsets.reduce((sum, o) => sum + (o.lag ?? 0), 0),
  };
}

/** A member's assignment; one this client cannot read shows as none. */
function assignmentOf(bytes: Buffer): GroupMember['assignment'] {
  try {
    return decodeAssignment(bytes);
  } catch {
    return [];
  }
}

async function lagOf(
  client: ClusterClient,
  conn: BrokerConnection,
  groupId: string,
): Promise<GroupPartitionLag[]> {
  // v2-7 carry one group at the top level; null topics: every committed partition.
  const version = Math.min(conn.versionFor(ApiKey.OffsetFetch) ?? 0, 7);
  if (version < 2) return [];
  const answer = await conn.request(
    ApiKey.OffsetFetch,
    { groupId, topics: null, requireStable: false },
    { version },
  );
  if (answer.errorCode)
    throw new KafkaResponseError(answer.errorCode, `fetching the offsets of group ${groupId}`);
  const committed: Array<{ topic: string; partition: number; offset: number }> = [];
  for (const t of answer.topics as Message[]) {
    for (const p of t.partitions as Message[]) {
      if (p.errorCode === 0 && Number(p.committedOffset) >= 0)
        committed.push({
          topic: t.name,
          partition: p.partitionIndex,
          offset: Number(p.committedOffset),
        });
    }
  }
  const ends = await offsetsAt(
    client,
    committed.map((c) => ({ topic: c.topic, partition: c.partition })),
    LATEST,
    0,
  );
  return committed
    .map((c) => {
      const end = ends.get(partitionKey(c.topic, c.partition));
      return {
        topic: c.topic,
        partition: c.partition,
        committedOffset: c.offset,
        endOffset: end ?? null,
        lag: end === undefined ? null : Math.max(0, end - c.offset),
      };
    })
    .sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
}

/**
 * Writing a consumer group's committed offsets from outside the group, as Kafka's
 * Admin.alterConsumerGroupOffsets and deleteConsumerGroupOffsets do:
 *   - commit: OffsetCommit with generation -1 and no member id (a "simple" commit),
 *     which a coordinator accepts only while the group has no members;
 *   - delete: OffsetDelete, refused for topics the group's members consume;
 *   - delete the group (DeleteGroups, with its offsets), refused while it has members.
 * None joins the group, so whatever the outcome the group keeps the members it had
 * (none, for a STOPPED connector): there is no member to leave behind and nothing to
 * clean up after a failure. kafkajs's admin.setOffsets joins the group with a
 * consumer instead, and a failure halfway left that member in the group until its
 * session timed out.
 *
 * The herder's offsets API (connector-offsets.ts) and the connector API's TopicReader
 * commit through here.
 *
 * Requests go to the group's coordinator through the caller's ClusterClient; a
 * coordinator that moved or is still loading is looked up again a few times.
 * Per-partition errors are answered, not thrown: the caller decides what they mean.
 */
import { ApiKey } from '../api-keys.ts';
import type { Message } from '../codec.ts';
import { ErrorCode, errorByCode } from '../error-codes.ts';
import { UnsupportedApiError } from './broker-connection.ts';
import { type ClusterClient, KafkaResponseError } from './cluster-client.ts';

export interface GroupPartition {
  topic: string;
  partition: number;
}

/** A partition the coordinator refused, with Kafka's error code. */
export interface PartitionError extends GroupPartition {
  code: number;
}

/** Answers that a new FindCoordinator may cure. */
const COORDINATOR_ERRORS = new Set<number>([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);
/** Enough for a coordinator that is loading __consumer_offsets after a restart. */
const ATTEMPTS = 5;
const BACKOFF_MS = 200;

/** Commits `offsets` for `groupId` without joining it; answers the refused partitions. */
export async function commitGroupOffsets(
  client: ClusterClient,
  groupId: string,
  offsets: ReadonlyArray<GroupPartition & { offset: number }>,
): Promise<PartitionError[]> {
  if (offsets.length === 0) return [];
  const topics = [...byTopic(offsets)].map(([name, list]) => ({
    name,
    partitions: list.map((o) => ({
      partitionIndex: o.partition,
      committedOffset: BigInt(o.offset),
      committedLeaderEpoch: -1,
      commitTimestamp: -1n,
      // What Java's OffsetAndMetadata(offset) carries.
      committedMetadata: '',
    })),
  }));
  return coordinatorRequest(
    client,
    groupId,
    async (conn) => {
      const answer = await conn.request(ApiKey.OffsetCommit, {
        groupId,
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics,
      });
      return partitionErrors(answer);
    },
    partitionCodes,
  );
}

/**
 * Deletes the committed offsets of `partitions` without joining the group; answers the
 * refused partitions. A group that does not exist has no offsets to delete: success.
 */
export async function deleteGroupOffsets(
  client: ClusterClient,
  groupId: string,
  partitions: readonly GroupPartition[],
): Promise<PartitionError[]> {
  if (partitions.length === 0) return [];
  const topics = [...byTopic(partitions)].map(([name, list]) => ({
    name,
    partitions: list.map((p) => ({ partitionIndex: p.partition })),
  }));
  return coordinatorRequest(
    client,
    groupId,
    async (conn) => {
      const answer = await conn.request(ApiKey.OffsetDelete, { groupId, topics });
      const code = answer.errorCode as number;
      if (code === ErrorCode.GROUP_ID_NOT_FOUND) return [];
      if (code !== 0) return partitions.map((p) => ({ ...p, code }));
      return partitionErrors(answer);
    },
    partitionCodes,
  );
}

/**
 * Deletes the group with its committed offsets; answers 0 or Kafka's error code
 * (NON_EMPTY_GROUP while it has members). A group that does not exist is already gone: 0.
 */
export async function deleteGroup(client: ClusterClient, groupId: string): Promise<number> {
  const code = await coordinatorRequest(
    client,
    groupId,
    async (conn) => {
      const answer = await conn.request(ApiKey.DeleteGroups, { groupsNames: [groupId] });
      return ((answer.results as Message[])[0]?.errorCode as number | undefined) ?? 0;
    },
    (c) => [c],
  );
  return code === ErrorCode.GROUP_ID_NOT_FOUND ? 0 : code;
}

/** The text of a refused partition, e.g. `lines-3: UNKNOWN_TOPIC_OR_PARTITION (...)`. */
export function describePartitionError(e: PartitionError): string {
  const info = errorByCode(e.code);
  return `${e.topic}-${e.partition}: ${info.name} (${info.message})`;
}

type Connection = Awaited<ReturnType<ClusterClient['coordinatorFor']>>;

/**
 * Runs `send` on the group's coordinator, finding it again after coordinator errors
 * (thrown, or among the answer's error `codes`).
 */
async function coordinatorRequest<T>(
  client: ClusterClient,
  groupId: string,
  send: (conn: Connection) => Promise<T>,
  codes: (answer: T) => number[],
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let answer: T;
    try {
      answer = await send(await client.coordinatorFor(groupId));
    } catch (e) {
      // Lost connections and timeouts may pass; a refusal or a missing API will not.
      const retriable =
        e instanceof KafkaResponseError
          ? COORDINATOR_ERRORS.has(e.code)
          : !(e instanceof UnsupportedApiError);
      if (!retriable || attempt >= ATTEMPTS) throw e;
      client.invalidate();
      await delay(BACKOFF_MS * attempt);
      continue;
    }
    if (attempt < ATTEMPTS && codes(answer).some((c) => COORDINATOR_ERRORS.has(c))) {
      client.invalidate();
      await delay(BACKOFF_MS * attempt);
      continue;
    }
    return answer;
  }
}

const partitionCodes = (errors: PartitionError[]) => errors.map((e) => e.code);

function partitionErrors(answer: Message): PartitionError[] {
  const errors: PartitionError[] = [];
  for (const t of answer.topics as Message[]) {
    for (const p of t.partitions as Message[]) {
      if (p.errorCode !== 0)
        errors.push({ topic: t.name, partition: p.partitionIndex, code: p.errorCode });
    }
  }
  return errors;
}

function byTopic<T extends GroupPartition>(entries: readonly T[]): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const e of entries) {
    const list = map.get(e.topic) ?? [];
    list.push(e);
    map.set(e.topic, list);
  }
  return map;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

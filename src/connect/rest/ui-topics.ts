/**
 * What the status page shows of topics, read over the Kafka protocol with the
 * runtime's own client (never a private API of the embedded broker, so it reads a real
 * Kafka cluster the same way):
 *   - listTopics: every topic with its partitions (leader, log start and end offsets,
 *     so the records each holds) and the configs that say how it is kept (cleanup
 *     policy, retention, segment size); Metadata, ListOffsets and DescribeConfigs;
 *   - tailPartition: the last `limit` committed records of one partition (ListOffsets
 *     for the last stable offset, one or a few Fetches from `end - limit`), aborted
 *     transactions and markers left out as a read_committed consumer does.
 * Read-only and bounded: nothing is produced, committed or joined, a tail returns at
 * most TAIL_MAX_RECORDS records, and each key, value or header longer than
 * SHOWN_BYTES is cut (and says so), so one large record cannot make a large answer.
 */
import { ApiKey } from '../../protocol/api-keys.ts';
import {
  AbortedTransactionFilter,
  recordsFrom,
} from '../../protocol/client/aborted-transactions.ts';
import type { BrokerConnection } from '../../protocol/client/broker-connection.ts';
import { type ClusterClient, KafkaResponseError } from '../../protocol/client/cluster-client.ts';
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { PartitionTail, ShownBytes, TailRecord, TopicSummary } from './ui-api-types.ts';

/** The most records a tail answers: enough to read, small enough to answer at once. */
export const TAIL_MAX_RECORDS = 100;
/** Bytes of a key, value or header shown; the rest is cut and `truncated` is set. */
export const SHOWN_BYTES = 16 * 1024;
/** One Fetch's budget; a tail makes at most TAIL_MAX_FETCHES of them. */
const FETCH_MAX_BYTES = 1024 * 1024;
const TAIL_MAX_FETCHES = 4;
const EARLIEST = -2n;
export const LATEST = -1n;
const TOPIC_RESOURCE = 2;
/** The topic configs the page shows: how the log is kept and cleaned. */
export const SHOWN_TOPIC_CONFIGS = [
  'cleanup.policy',
  'retention.ms',
  'retention.bytes',
  'segment.bytes',
  'min.compaction.lag.ms',
  'compression.type',
] as const;

/** A topic or partition that the cluster does not have. */
export class NoSuchPartitionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoSuchPartitionError';
  }
}

export async function listTopics(client: ClusterClient): Promise<TopicSummary[]> {
  const metadata = (await client.metadata(null)).filter((t) => t.errorCode === 0);
  const wanted = metadata.flatMap((t) =>
    t.partitions.map((p) => ({ topic: t.name, partition: p.partition })),
  );
  const [starts, ends, configs] = await Promise.all([
    offsetsAt(client, wanted, EARLIEST, 0),
    offsetsAt(client, wanted, LATEST, 0),
    topicConfigs(
      client,
      metadata.map((t) => t.name),
    ),
  ]);
  return metadata
    .map((t) => ({
      name: t.name,
      internal: t.internal,
      partitions: t.partitions
        .map((p) => ({
          partition: p.partition,
          leader: p.leader,
          startOffset: starts.get(partitionKey(t.name, p.partition)) ?? 0,
          endOffset: ends.get(partitionKey(t.name, p.partition)) ?? 0,
        }))
        .sort((a, b) => a.partition - b.partition),
      configs: configs.get(t.name) ?? {},
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export async function tailPartition(
  client: ClusterClient,
  topic: string,
  partition: number,
  limit: number,
): Promise<PartitionTail> {
  const [meta] = await client.metadata([topic]);
  if (meta === undefined || meta.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    throw new NoSuchPartitionError(`Topic ${topic} not found`);
  if (meta.errorCode !== 0) throw new KafkaResponseError(meta.errorCode, `metadata of ${topic}`);
  if (!meta.partitions.some((p) => p.partition === partition)) {
    throw new NoSuchPartitionError(
      `Topic ${topic} has no partition ${partition} (it has ${meta.partitions.length})`,
    );
  }
  const wanted = [{ topic, partition }];
  const [starts, ends] = await Promise.all([
    offsetsAt(client, wanted, EARLIEST, 1),
    offsetsAt(client, wanted, LATEST, 1),
  ]);
  const startOffset = starts.get(partitionKey(topic, partition)) ?? 0;
  const endOffset = ends.get(partitionKey(topic, partition)) ?? 0;
  const records: TailRecord[] = [];
  let position = Math.max(startOffset, endOffset - limit);
  const conn = await client.leaderConnection(topic, partition);
  for (let i = 0; i < TAIL_MAX_FETCHES && position < endOffset; i++) {
    const next = await fetchFrom(conn, topic, partition, position, endOffset, records);
    if (next <= position) break;
    position = next;
  }
  // Compaction leaves gaps, so `end - limit` may hold fewer; never more than `limit`.
  return { topic, partition, startOffset, endOffset, records: records.slice(-limit) };
}

/**
 * One read_committed Fetch from `from`; appends the records before `end` and answers
 * the offset to fetch next (`from` when nothing came back).
 */
async function fetchFrom(
  conn: BrokerConnection,
  topic: string,
  partition: number,
  from: number,
  end: number,
  into: TailRecord[],
): Promise<number> {
  const answer = await conn.request(ApiKey.Fetch, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: FETCH_MAX_BYTES,
    isolationLevel: 1,
    topics: [
      {
        topic,
        partitions: [{ partition, fetchOffset: BigInt(from), partitionMaxBytes: FETCH_MAX_BYTES }],
      },
    ],
    forgottenTopicsData: [],
  });
  if (answer.errorCode) throw new KafkaResponseError(answer.errorCode, `fetching ${topic}`);
  const p = ((answer.responses as Message[])[0]?.partitions as Message[] | undefined)?.[0];
  if (p === undefined) return from;
  if (p.errorCode !== 0)
    throw new KafkaResponseError(p.errorCode, `fetching ${topic}-${partition}`);
  const bytes = p.records as Buffer | null;
  if (!bytes || bytes.length === 0) return from;
  const filter = AbortedTransactionFilter.forAnswer(
    true,
    p.abortedTransactions as Message[] | null | undefined,
  );
  const { records, next } = recordsFrom(bytes, from, filter);
  for (const r of records ?? []) {
    if (r.offset >= end) break;
    into.push({
      partition,
      offset: r.offset,
      timestamp: r.timestamp,
      key: shown(r.key),
      value: shown(r.value),
      headers: r.headers.map((h) => ({ key: h.key, value: shown(h.value) })),
    });
  }
  return next;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function shown(bytes: Buffer | null): ShownBytes | null {
  if (bytes === null) return null;
  const truncated = bytes.length > SHOWN_BYTES;
  const cut = truncated ? bytes.subarray(0, SHOWN_BYTES) : bytes;
  // A cut may split a UTF-8 sequence (at most 3 bytes of it): drop those bytes.
  for (let drop = 0; drop <= (truncated ? 3 : 0); drop++) {
    try {
      const data = utf8.decode(cut.subarray(0, cut.length - drop));
      return { encoding: 'utf8', data, size: bytes.length, truncated };
    } catch {
      // not UTF-8 with this cut
    }
  }
  return { encoding: 'base64', data: cut.toString('base64'), size: bytes.length, truncated };
}

/**
 * Offsets of partitions at `timestamp` (-2 earliest, -1 latest), one request per
 * leader, keyed by partitionKey.
 */
export async function offsetsAt(
  client: ClusterClient,
  partitions: ReadonlyArray<{ topic: string; partition: number }>,
  timestamp: bigint,
  isolationLevel: 0 | 1,
): Promise<Map<string, number>> {
  const byLeader = new Map<BrokerConnection, Map<string, number[]>>();
  for (const p of partitions) {
    let conn: BrokerConnection;
    try {
      conn = await client.leaderConnection(p.topic, p.partition);
    } catch {
      // A deleted topic or a partition without a leader: its offsets show as unknown.
      continue;
    }
    const topics = byLeader.get(conn) ?? new Map<string, number[]>();
    topics.set(p.topic, [...(topics.get(p.topic) ?? []), p.partition]);
    byLeader.set(conn, topics);
  }
  const offsets = new Map<string, number>();
  await Promise.all(
    [...byLeader].map(async ([conn, topics]) => {
      const answer = await conn.request(ApiKey.ListOffsets, {
        replicaId: -1,
        isolationLevel,
        topics: [...topics].map(([name, list]) => ({
          name,
          partitions: list.map((partitionIndex) => ({ partitionIndex, timestamp })),
        })),
      });
      for (const t of answer.topics as Message[]) {
        for (const p of t.partitions as Message[]) {
          // A partition without a leader right now shows no offsets rather than failing the page.
          if (p.errorCode === 0)
            offsets.set(partitionKey(t.name, p.partitionIndex), Number(p.offset));
        }
      }
    }),
  );
  return offsets;
}

async function topicConfigs(
  client: ClusterClient,
  topics: readonly string[],
): Promise<Map<string, Record<string, string | null>>> {
  const result = new Map<string, Record<string, string | null>>();
  if (topics.length === 0) return result;
  const conn = await client.anyConnection();
  const answer = await conn.request(ApiKey.DescribeConfigs, {
    resources: topics.map((resourceName) => ({
      resourceType: TOPIC_RESOURCE,
      resourceName,
      configurationKeys: [...SHOWN_TOPIC_CONFIGS],
    })),
    includeSynonyms: false,
    includeDocumentation: false,
  });
  for (const r of answer.results as Message[]) {
    if (r.errorCode !== 0) continue;
    const configs: Record<string, string | null> = {};
    for (const c of r.configs as Message[]) configs[c.name as string] = c.value as string | null;
    result.set(r.resourceName as string, configs);
  }
  return result;
}

export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

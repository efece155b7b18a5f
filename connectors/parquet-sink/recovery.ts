/**
 * Recovering a topic partition's position from the store itself, so exactly-once
 * files survive crashes without trusting consumer offsets.
 *
 * Files are written in "commit groups": all the files a topic partition had open
 * when it rotated (one per encoded partition), covering offsets G..E together. Each
 * file's footer records its group: connect.group.start = G, connect.group.end = E
 * (the last offset consumed into the group, gaps from compaction included, so the
 * position is exact), connect.group.files = N. A group's files are uploaded only
 * after the previous group is complete, so only the newest group can be incomplete.
 *
 * Recovery reads one footer: that of the file with the highest start offset, which
 * belongs to the newest group. If N files of the partition start within G..E, the
 * group is complete: resume at E + 1. Otherwise a crash cut the group short: resume
 * at G and close the replayed group exactly at E (`pendingBoundary`), which rewrites
 * the same files, with the same names and bytes, even when the original boundary came
 * from the wall clock (rotate.schedule.interval.ms) or memory pressure. The replay
 * keeps the file extension the group's files have (`extension`), so files written
 * before the sink used Confluent's codec extensions are rewritten under their names.
 *
 * Keys and headers files (store.kafka.keys/headers, record-views.ts): each value file
 * has its keys and headers files beside it, named after it, holding the same rows.
 * They are uploaded before the value files of their group (topic-partition-writer.ts),
 * so the value file is the commit point: recovery reads and counts value files only,
 * and a value file present means its keys and headers files are. A crash after a keys
 * file was written but before its value file leaves the group incomplete (or absent):
 * the replay writes the keys file again under the same name with the same bytes, then
 * the value file. Nothing is lost and nothing is counted twice.
 *
 * A bucket Confluent's connector wrote: its files have Confluent's names but none of
 * these footer keys, and nothing in them records where a file ends. When the newest
 * file is such a file, recovery does not seek: consumption resumes at the connector's
 * committed offset, exactly where Confluent's connector would resume (same connector
 * name, same consumer group). With one file per rotation (the Default partitioner)
 * the newest file holds every record from its start offset on, so records below
 * start + its row count are in the bucket already: they are skipped (`skipBelow`) even
 * if the consumer starts earlier (a new connector name, a reset group). With other
 * partitioners files of one rotation interleave, and only the committed offset tells.
 */
import { DEFAULT_DELIMITERS, type Delimiters, parseFileName, topicPrefix } from './file-naming.ts';
import { FOOTER_TAIL_GUESS, footerLength, readFooter } from './footer-reader.ts';
import type { ObjectStore } from './object-store.ts';

export const KV_TOPIC = 'connect.topic';
export const KV_PARTITION = 'connect.partition';
export const KV_GROUP_START = 'connect.group.start';
export const KV_GROUP_END = 'connect.group.end';
export const KV_GROUP_FILES = 'connect.group.files';

export interface GroupMetadata {
  topic: string;
  partition: number;
  start: number;
  end: number;
  files: number;
}

export function groupKv(g: GroupMetadata): Array<{ key: string; value: string }> {
  return [
    { key: KV_TOPIC, value: g.topic },
    { key: KV_PARTITION, value: String(g.partition) },
    { key: KV_GROUP_START, value: String(g.start) },
    { key: KV_GROUP_END, value: String(g.end) },
    { key: KV_GROUP_FILES, value: String(g.files) },
  ];
}

export interface RecoveredPosition {
  /** The next offset to consume. */
  nextOffset: number;
  /** When the newest group is incomplete: the offset at which its replay must close. */
  pendingBoundary?: number;
  /** The newest group as its footer describes it. */
  lastGroup: GroupMetadata;
  /** The extension of the newest group's files (`.snappy.parquet`, or `.parquet`). */
  extension: string;
}

/** The newest file was written by Confluent's connector (no group footer). */
export interface ForeignPosition {
  foreign: string;
  /** Offsets below this are in the bucket already; undefined when that is unknown. */
  skipBelow?: number;
}

export interface RecoveryOptions extends Delimiters {
  /** One file per rotation (the Default partitioner), which makes skipBelow exact. */
  oneFilePerGroup: boolean;
}

export class RecoveryError extends Error {
  readonly kind = 'recovery';
}

/** The position of a topic partition in the store; undefined when it has no files. */
export async function recoverPosition(
  store: ObjectStore,
  topicsDir: string,
  topic: string,
  partition: number,
  o: RecoveryOptions = { ...DEFAULT_DELIMITERS, oneFilePerGroup: true },
): Promise<RecoveredPosition | ForeignPosition | undefined> {
  const files = (await store.list(topicPrefix(topicsDir, topic, o.dirDelim)))
    .map((key) => ({ key, coords: parseFileName(key, o, topic) }))
    .filter(
      (f) =>
        f.coords?.topic === topic &&
        f.coords.kafkaPartition === partition &&
        f.coords.view === undefined,
    );
  if (files.length === 0) return undefined;
  let newest = files[0] as (typeof files)[number];
  for (const f of files) {
    if ((f.coords?.startOffset ?? -1) > (newest.coords?.startOffset ?? -1)) newest = f;
  }
  const footer = await readTailFooter(store, newest.key);
  if (!footer.kv.has(KV_GROUP_START)) {
    const start = newest.coords?.startOffset as number;
    return o.oneFilePerGroup
      ? { foreign: newest.key, skipBelow: start + Number(footer.numRows) }
      : { foreign: newest.key };
  }
  const group = groupOf(store, newest.key, footer.kv);
  const members = files.filter((f) => {
    const start = f.coords?.startOffset ?? -1;
    return start >= group.start && start <= group.end;
  }).length;
  const extension = newest.coords?.extension as string;
  if (members >= group.files) return { nextOffset: group.end + 1, lastGroup: group, extension };
  return { nextOffset: group.start, pendingBoundary: group.end, lastGroup: group, extension };
}

export function isForeign(p: RecoveredPosition | ForeignPosition): p is ForeignPosition {
  return 'foreign' in p;
}

async function readTailFooter(store: ObjectStore, key: string) {
  let tail = await store.readTail(key, FOOTER_TAIL_GUESS);
  const needed = footerLength(tail) + 8;
  if (needed > tail.length) tail = await store.readTail(key, needed);
  return readFooter(tail);
}

export async function readGroup(store: ObjectStore, key: string): Promise<GroupMetadata> {
  return groupOf(store, key, (await readTailFooter(store, key)).kv);
}

function groupOf(store: ObjectStore, key: string, kv: Map<string, string>): GroupMetadata {
  const number = (k: string): number => {
    const v = Number(kv.get(k));
    if (!kv.has(k) || !Number.isSafeInteger(v)) {
      throw new RecoveryError(
        `${store.description}/${key} has no '${k}' in its footer: it was not written by this sink (move it away or use another topics.dir)`,
      );
    }
    return v;
  };
  return {
    topic: kv.get(KV_TOPIC) ?? '',
    partition: number(KV_PARTITION),
    start: number(KV_GROUP_START),
    end: number(KV_GROUP_END),
    files: number(KV_GROUP_FILES),
  };
}

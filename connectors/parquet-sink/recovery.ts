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
 * the value file. Nothing is lost and nothing is counted twice. The tombstone folder
 * (behavior.on.null.values=write, tombstone.encoded.partition) has no value files, as
 * in Confluent's sink: there the keys file is uploaded last and is the commit point
 * counted, the headers file going first.
 *
 * Row formats (JsonFormat, ByteArrayFormat, AvroFormat: file-format.ts) have no footer
 * every reader ignores, so their files carry the same five values as object metadata
 * (`connect-group-start`, ...: S3 user metadata, or the local store's hidden metadata
 * file), put atomically with the object (object-store.ts). Recovery reads them there
 * instead of the footer and decides the same way, so rotations cut by the clock or by
 * memory pressure replay exactly for every format. Which is read depends on the newest
 * file's extension: `.parquet` files their footer, others their metadata.
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

/**
 * The group as object metadata (row formats): the footer's keys with '-' for '.', as
 * S3 user metadata names travel in HTTP headers (x-amz-meta-connect-group-start).
 */
export function groupObjectMetadata(g: GroupMetadata): Record<string, string> {
  return Object.fromEntries(groupKv(g).map((e) => [metadataName(e.key), e.value]));
}

function metadataName(kvKey: string): string {
  return kvKey.replaceAll('.', '-');
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
  /**
   * behavior.on.null.values=write: the tombstone folder, whose files are keys (and
   * headers) files only; there the keys file is the commit point a value file is
   * elsewhere, so recovery reads and counts it.
   */
  tombstoneFolder?: string;
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
  const prefix = topicPrefix(topicsDir, topic, o.dirDelim);
  const tombstones =
    o.tombstoneFolder === undefined ? undefined : `${prefix}${o.tombstoneFolder}${o.dirDelim}`;
  const inTombstones = (key: string) =>
    tombstones !== undefined &&
    key.startsWith(tombstones) &&
    !key.slice(tombstones.length).includes(o.dirDelim);
  const files = (await store.list(prefix))
    .map((key) => ({ key, coords: parseFileName(key, o, topic) }))
    .filter(
      (f) =>
        f.coords?.topic === topic &&
        f.coords.kafkaPartition === partition &&
        (f.coords.view === undefined || (f.coords.view === 'keys' && inTombstones(f.key))),
    );
  if (files.length === 0) return undefined;
  let newest = files[0] as (typeof files)[number];
  for (const f of files) {
    if ((f.coords?.startOffset ?? -1) > (newest.coords?.startOffset ?? -1)) newest = f;
  }
  const extension = newest.coords?.extension as string;
  let kv: Map<string, string>;
  if (extension.endsWith('.parquet')) {
    const footer = await readTailFooter(store, newest.key);
    if (!footer.kv.has(KV_GROUP_START)) {
      const start = newest.coords?.startOffset as number;
      return o.oneFilePerGroup
        ? { foreign: newest.key, skipBelow: start + Number(footer.numRows) }
        : { foreign: newest.key };
    }
    kv = footer.kv;
  } else {
    kv = await readObjectGroup(store, newest.key);
    // A row file Confluent's connector wrote: its committed offset tells where it ends.
    if (!kv.has(KV_GROUP_START)) return { foreign: newest.key };
  }
  const group = groupOf(store, newest.key, kv);
  const members = files.filter((f) => {
    const start = f.coords?.startOffset ?? -1;
    return start >= group.start && start <= group.end;
  }).length;
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

/** A row-format file's group values, from its object metadata, under the footer's keys. */
async function readObjectGroup(store: ObjectStore, key: string): Promise<Map<string, string>> {
  const metadata = await store.readMetadata(key);
  const kv = new Map<string, string>();
  for (const k of [KV_TOPIC, KV_PARTITION, KV_GROUP_START, KV_GROUP_END, KV_GROUP_FILES]) {
    const v = metadata[metadataName(k)];
    if (v !== undefined) kv.set(k, v);
  }
  return kv;
}

export async function readGroup(store: ObjectStore, key: string): Promise<GroupMetadata> {
  const kv = key.endsWith('.parquet')
    ? (await readTailFooter(store, key)).kv
    : await readObjectGroup(store, key);
  return groupOf(store, key, kv);
}

function groupOf(store: ObjectStore, key: string, kv: Map<string, string>): GroupMetadata {
  const number = (k: string): number => {
    const v = Number(kv.get(k));
    if (!kv.has(k) || !Number.isSafeInteger(v)) {
      throw new RecoveryError(
        `${store.description}/${key} has no '${k}' in its ${key.endsWith('.parquet') ? 'footer' : 'metadata'}: it was not written by this sink (move it away or use another topics.dir)`,
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

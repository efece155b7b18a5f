/**
 * Object names, as Confluent's S3 sink writes them:
 *
 *   <topics.dir>/<topic>/<encoded partition>/<topic>+<kafka partition>+<start offset><ext>
 *
 * where '/' is `directory.delim`, '+' is `file.delim`, the start offset is zero-padded to
 * `filename.offset.zero.pad.width` digits (so names sort in offset order) and <ext> is
 * Confluent's ParquetFormat extension for the codec: parquet-mr's codec extension
 * before `.parquet` (`.snappy.parquet`, `.gz.parquet`, `.zstd.parquet`, `.br.parquet`,
 * `.lz4raw.parquet`; `.parquet` uncompressed). Existing readers and Hive-style table
 * definitions find the files, and a bucket Confluent's connector wrote is resumed in
 * place.
 *
 * With store.kafka.keys / store.kafka.headers each value file has a keys file and a
 * headers file beside it, Confluent's RecordView suffix before the extension:
 * `<topic>+<partition>+<start offset>.keys<ext>` and `.headers<ext>` (record-views.ts).
 *
 * Names this sink wrote before it followed Confluent's extensions end in `.parquet`
 * whatever the codec. parseFileName() reads both forms, and recovery replays an
 * interrupted group under the extension its files already have (recovery.ts), so
 * upgrading never leaves one group's files under two names.
 *
 * Topic names cannot contain '+' ([a-zA-Z0-9._-]) and partitions and offsets are
 * digits, so a name parses from its end without ambiguity for any delimiter.
 */
import type { ParquetCodec } from './codecs.ts';
import { type RecordView, viewSuffix } from './record-views.ts';

export const PARQUET_EXTENSION = '.parquet';

/** parquet-mr's CompressionCodecName extensions, as Confluent's ParquetFormat uses them. */
const CODEC_EXTENSIONS: Record<ParquetCodec, string> = {
  none: '',
  snappy: '.snappy',
  gzip: '.gz',
  zstd: '.zstd',
  brotli: '.br',
  lz4_raw: '.lz4raw',
};

export function parquetExtension(codec: ParquetCodec): string {
  return `${CODEC_EXTENSIONS[codec]}${PARQUET_EXTENSION}`;
}

export interface FileCoordinates {
  topic: string;
  kafkaPartition: number;
  startOffset: number;
}

export interface NameFormat {
  padWidth: number;
  /** file.delim */
  delim: string;
  /** With its dot: `.snappy.parquet`. */
  extension: string;
}

/** The value file's name, or with `view` the name of its keys or headers file. */
export function fileName(c: FileCoordinates, f: NameFormat, view?: RecordView): string {
  const offset = String(c.startOffset).padStart(f.padWidth, '0');
  return `${c.topic}${f.delim}${c.kafkaPartition}${f.delim}${offset}${viewSuffix(view)}${f.extension}`;
}

export function objectKey(
  topicsDir: string,
  topic: string,
  encodedPartition: string,
  name: string,
  dirDelim = '/',
): string {
  return [topicsDir, topic, encodedPartition, name].filter((p) => p !== '').join(dirDelim);
}

/** The prefix under which every file of a topic lives (recovery lists it). */
export function topicPrefix(topicsDir: string, topic: string, dirDelim = '/'): string {
  return `${[topicsDir, topic].filter((p) => p !== '').join(dirDelim)}${dirDelim}`;
}

export interface ParsedName extends FileCoordinates {
  extension: string;
  /** Set for a keys or headers file; absent for a value file. */
  view?: RecordView;
}

/** file.delim and directory.delim. */
export interface Delimiters {
  delim: string;
  dirDelim: string;
  /**
   * Extensions read besides the Parquet ones: the configured row format's (`.json`,
   * `.json.gz`, `.avro`, format.bytearray.extension), so its files are recognised.
   */
  extensions?: readonly string[];
}

export const DEFAULT_DELIMITERS: Delimiters = { delim: '+', dirDelim: '/' };

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const patterns = new Map<string, RegExp>();

/**
 * Parse an object key written for `topic` (or for any topic when not given, the name
 * then being what follows the last directory delimiter); undefined for foreign files.
 * Any `.<codec>.parquet` or plain `.parquet` extension is read (and the row format's
 * extensions given in `d.extensions`), after an optional
 * `.keys` / `.headers` view suffix (so `t+0+5.keys.parquet` is the keys file of
 * `t+0+5.parquet`, not a value file with a `.keys` codec). With the topic known
 * the name is matched as a whole key suffix, so a directory delimiter that also occurs
 * in topic names (directory.delim=_ and a topic my_orders) still parses.
 */
export function parseFileName(
  key: string,
  d: Delimiters = DEFAULT_DELIMITERS,
  topic?: string,
): ParsedName | undefined {
  const others = d.extensions ?? [];
  const id = `${d.delim}\u0000${d.dirDelim}\u0000${topic ?? ''}\u0000${others.join('\u0000')}`;
  let re = patterns.get(id);
  if (re === undefined) {
    const fd = escapeRegExp(d.delim);
    const name =
      topic === undefined ? `([^${escapeRegExp(d.dirDelim)}]+?)` : `(${escapeRegExp(topic)})`;
    const extension = ['(?:\\.[a-z0-9]+)?\\.parquet', ...others.map(escapeRegExp)].join('|');
    re = new RegExp(
      `(?:^|${escapeRegExp(d.dirDelim)})${name}${fd}(\\d+)${fd}(\\d+)(?:\\.(keys|headers))?(${extension})$`,
    );
    if (patterns.size > 1000) patterns.clear();
    patterns.set(id, re);
  }
  const m = re.exec(key);
  if (!m) return undefined;
  const startOffset = Number(m[3]);
  if (!Number.isSafeInteger(startOffset)) return undefined;
  const parsed: ParsedName = {
    topic: m[1] as string,
    kafkaPartition: Number(m[2]),
    startOffset,
    extension: m[5] as string,
  };
  if (m[4] !== undefined) parsed.view = m[4] as RecordView;
  return parsed;
}

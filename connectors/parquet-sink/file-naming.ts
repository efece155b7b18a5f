/**
 * Object names: `<topics.dir>/<topic>/<encoded partition>/<topic>+<kafka partition>+<start offset>.parquet`,
 * the layout of Confluent's S3 sink, so existing readers and Hive-style table
 * definitions find the files. The start offset is zero-padded to
 * `filename.offset.zero.pad.width` digits so names sort in offset order.
 *
 * Kafka topic names cannot contain '+' ([a-zA-Z0-9._-]), so a name parses from its
 * end without ambiguity.
 */

export const PARQUET_EXTENSION = '.parquet';

export interface FileCoordinates {
  topic: string;
  kafkaPartition: number;
  startOffset: number;
}

export function fileName(c: FileCoordinates, padWidth: number): string {
  return `${c.topic}+${c.kafkaPartition}+${String(c.startOffset).padStart(padWidth, '0')}${PARQUET_EXTENSION}`;
}

export function objectKey(
  topicsDir: string,
  topic: string,
  encodedPartition: string,
  name: string,
): string {
  return [topicsDir, topic, encodedPartition, name].filter((p) => p !== '').join('/');
}

/** The folder under which every file of a topic lives (recovery lists it). */
export function topicPrefix(topicsDir: string, topic: string): string {
  return `${[topicsDir, topic].filter((p) => p !== '').join('/')}/`;
}

/** Parse the last path segment of an object key; undefined for foreign files. */
export function parseFileName(key: string): FileCoordinates | undefined {
  const base = key.slice(key.lastIndexOf('/') + 1);
  const m = /^(.+)\+(\d+)\+(\d+)\.parquet$/.exec(base);
  if (!m) return undefined;
  const startOffset = Number(m[3]);
  if (!Number.isSafeInteger(startOffset)) return undefined;
  return { topic: m[1] as string, kafkaPartition: Number(m[2]), startOffset };
}

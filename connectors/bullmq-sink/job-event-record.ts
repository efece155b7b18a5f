/**
 * One entry of a BullMQ events stream as a source record. BullMQ's scripts append
 *   completed: event=completed jobId=<id> returnvalue=<JSON text> prev=active
 *   failed:    event=failed    jobId=<id> failedReason=<text>     prev=active
 * (and other events, which the source skips). The record is keyed by job id; its value
 * is a struct with the outcome, the return value kept as the JSON text BullMQ stored;
 * its timestamp is the entry id's milliseconds (when Redis appended it). The source
 * offset is the entry id, so a restarted task reads on after it.
 */
import { Schemas, type SourcePartition, type SourceRecord } from '../../src/connect/api/index.ts';

export const JOB_EVENT_SCHEMA = Schemas.struct(
  [
    ['queue', Schemas.string()],
    ['job_id', Schemas.string()],
    ['event', Schemas.string()],
    ['return_value', Schemas.string({ optional: true })],
    ['failed_reason', Schemas.string({ optional: true })],
    ['stream_id', Schemas.string()],
  ],
  { name: 'connect.bullmq.JobEvent', version: 1 },
);

const KEY_SCHEMA = Schemas.string();

/** The fields of a stream entry (ioredis gives them as [name, value, name, value, ...]). */
export function entryFields(flat: readonly string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) m.set(flat[i]!, flat[i + 1]!);
  return m;
}

export function jobEventRecord(
  topic: string,
  queue: string,
  partition: SourcePartition,
  id: string,
  fields: Map<string, string>,
): SourceRecord {
  const jobId = fields.get('jobId') ?? '';
  return {
    topic,
    kafkaPartition: null,
    keySchema: KEY_SCHEMA,
    key: jobId,
    valueSchema: JOB_EVENT_SCHEMA,
    value: {
      queue,
      job_id: jobId,
      event: fields.get('event') ?? '',
      return_value: fields.get('returnvalue') ?? null,
      failed_reason: fields.get('failedReason') ?? null,
      stream_id: id,
    },
    timestamp: Number(id.slice(0, id.indexOf('-'))),
    sourcePartition: partition,
    sourceOffset: { stream_id: id },
  };
}

/** Order of two stream ids (`<ms>-<seq>`): negative, zero or positive. */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map((x) => BigInt(x || '0'));
  const [bm, bs] = b.split('-').map((x) => BigInt(x || '0'));
  if (am !== bm) return am! < bm! ? -1 : 1;
  if (as !== bs) return (as ?? 0n) < (bs ?? 0n) ? -1 : 1;
  return 0;
}

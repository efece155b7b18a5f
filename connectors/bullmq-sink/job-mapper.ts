/**
 * One record -> one action on BullMQ: add a job, delete the waiting job of a key (a
 * tombstone with behavior.on.null.values=delete), or nothing (an ignored tombstone).
 * Pure: no I/O, so every mapping rule is tested without Redis.
 *
 * Job ids (BullMQ refuses integer ids and ids with ':'):
 *   record   <topic>-<partition>-<offset>
 *   key      <topic>/<key text>: a primitive key as text, a struct key its field values
 *            in order joined by ',' (Debezium's {"id": 42} -> shop.public.orders/42).
 *            The topic keeps rows of two tables apart when they share a queue.
 *   template as rendered.
 * In every id, '%' and ':' are percent-encoded (%25, %3A), so any key text is a valid,
 * distinct id.
 * A record that cannot be mapped (a missing field, no envelope for job.data=after) is
 * a DataException naming the record and the field: the task hands it to the errant
 * record reporter (errors.tolerance=all, dead letter queue) or fails.
 */
import type { JobsOptions } from 'bullmq';
import {
  beforePlaceholders,
  ConnectException,
  DataException,
  type SinkRecord,
} from '../../src/connect/api/index.ts';
import type { BullMQSinkConfig } from './config.ts';
import { MAX_PRIORITY, type NumberSpec } from './job-settings.ts';
import { keyOrderSet } from './key-order.ts';
import { fieldAt, jsonSafe, rowImage, scalarText } from './record-fields.ts';
import { renderTemplate, where } from './template.ts';

export type JobAction =
  | {
      kind: 'add';
      queue: string;
      name: string;
      data: unknown;
      opts: JobsOptions & { jobId: string };
      /** With ordering=key: the key's set (key-order.ts) and the job's score in it. */
      order?: { set: string; score: number };
    }
  | { kind: 'delete'; queue: string; jobId: string }
  | { kind: 'skip' };

export class JobMapper {
  /** The options every job shares; per-record ones are added to a copy. */
  private readonly baseOpts: JobsOptions;

  constructor(private readonly c: BullMQSinkConfig) {
    this.baseOpts = {
      attempts: c.attempts,
      ...(c.backoff ? { backoff: { type: c.backoff.type, delay: c.backoff.delay } } : {}),
      ...(c.lifo ? { lifo: true } : {}),
      removeOnComplete: c.removeOnComplete,
      removeOnFail: c.removeOnFail,
      ...(c.priority.kind === 'fixed' && c.priority.value > 0
        ? { priority: c.priority.value }
        : {}),
      ...(c.delayMs.kind === 'fixed' && c.delayMs.value > 0 ? { delay: c.delayMs.value } : {}),
    };
  }

  map(record: SinkRecord): JobAction {
    if (record.value === null || record.value === undefined) {
      switch (this.c.nullBehavior) {
        case 'ignore':
          return { kind: 'skip' };
        case 'fail':
          throw new ConnectException(
            `${where(record)} has a null value (a tombstone) and behavior.on.null.values=fail`,
          );
        case 'delete':
          return { kind: 'delete', queue: this.queue(record), jobId: this.keyId(record) };
      }
    }
    const queue = this.queue(record);
    const opts: JobsOptions & { jobId: string } = { ...this.baseOpts, jobId: this.jobId(record) };
    const priority = this.numberFromField(this.c.priority, record, 'job.priority');
    if (priority !== undefined && priority > MAX_PRIORITY) {
      throw new DataException(
        `${where(record)}: job.priority ${priority} is above BullMQ's maximum ${MAX_PRIORITY}`,
      );
    }
    if (priority !== undefined && priority > 0) opts.priority = priority;
    const delay = this.numberFromField(this.c.delayMs, record, 'job.delay.ms');
    if (delay !== undefined && delay > 0) opts.delay = delay;
    return {
      kind: 'add',
      queue,
      name: renderTemplate(this.c.jobName, record),
      data: this.data(record),
      opts,
      ...(this.c.ordering === 'key' ? { order: this.order(record, queue) } : {}),
    };
  }

  /** The key's set and the score of the record's job in it (ordering=key). */
  private order(record: SinkRecord, queue: string): { set: string; score: number } {
    const text = keyText(record.key);
    if (text === undefined) {
      throw new DataException(
        `${where(record)} has no key, but ordering=key orders the jobs of each record key`,
      );
    }
    const tp = { topic: record.topic, partition: record.kafkaPartition };
    return {
      set: keyOrderSet(this.c.prefix, queue, tp, encodeId(text)),
      score: record.kafkaOffset,
    };
  }

  /** The queue of a record; a tombstone's only from its topic, partition or key (config.ts). */
  private queue(record: SinkRecord): string {
    const queue = renderTemplate(this.c.queueName, record);
    if (queue.includes(':')) {
      throw new DataException(
        `${where(record)}: queue name '${queue}' contains ':', which BullMQ refuses`,
      );
    }
    return queue;
  }

  private data(record: SinkRecord): unknown {
    const spec = this.c.jobData;
    switch (spec.kind) {
      case 'value':
        return jsonSafe(record.value);
      case 'after': {
        const image = rowImage(record.value);
        if (image === undefined) {
          throw new DataException(
            `${where(record)}: job.data=after needs a Debezium envelope with op and the after (or, for a delete, before) row; the value has none`,
          );
        }
        return jsonSafe(withoutPlaceholders(record, image));
      }
      case 'fields': {
        const out: Record<string, unknown> = {};
        for (const f of spec.fields) {
          const v = fieldAt(record.value, f.path);
          if (v === undefined) {
            throw new DataException(
              `${where(record)}: job.data field ${f.path.join('.')} is missing`,
            );
          }
          out[f.name] = jsonSafe(v);
        }
        return out;
      }
    }
  }

  private jobId(record: SinkRecord): string {
    const spec = this.c.jobId;
    switch (spec.kind) {
      case 'record':
        return encodeId(`${record.topic}-${record.kafkaPartition}-${record.kafkaOffset}`);
      case 'key':
        return this.keyId(record);
      case 'template': {
        const id = encodeId(renderTemplate(spec.template, record));
        if (/^\d+$/.test(id) || `${Number.parseInt(id, 10)}` === id) {
          throw new DataException(
            `${where(record)}: job id '${id}' is an integer, which BullMQ refuses`,
          );
        }
        return id;
      }
    }
  }

  private keyId(record: SinkRecord): string {
    const text = keyText(record.key);
    if (text === undefined) {
      throw new DataException(
        `${where(record)} has no key, but job ids come from keys (job.id=key)`,
      );
    }
    return encodeId(`${record.topic}/${text}`);
  }

  private numberFromField(spec: NumberSpec, record: SinkRecord, key: string): number | undefined {
    if (spec.kind !== 'field') return undefined;
    const text = renderTemplate(spec.template, record);
    const n = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) {
      throw new DataException(
        `${where(record)}: ${key} from '${spec.template.text}' is '${text}', not a whole number`,
      );
    }
    return n;
  }
}

/**
 * A delete's before image without the placeholders Postgres' REPLICA IDENTITY DEFAULT
 * leaves in it ("" and 0 for columns it did not send, named by the CDC source's
 * BEFORE_PLACEHOLDERS_HEADER): those columns are null in the job, as Debezium's
 * rewritten deletes show them, never a made-up value.
 */
function withoutPlaceholders(
  record: SinkRecord,
  image: Record<string, unknown>,
): Record<string, unknown> {
  if ((record.value as { op?: unknown }).op !== 'd') return image;
  const placeholders = beforePlaceholders(record);
  if (placeholders.size === 0) return image;
  const out = { ...image };
  for (const name of placeholders) if (name in out) out[name] = null;
  return out;
}

/** A key as id text (see the header); undefined for a null key. */
export function keyText(key: unknown): string | undefined {
  if (key === null || key === undefined) return undefined;
  const scalar = scalarText(key);
  if (scalar !== undefined) return scalar;
  if (key instanceof Uint8Array) return Buffer.from(key).toString('base64');
  if (typeof key === 'object' && !Array.isArray(key)) {
    const values = key instanceof Map ? [...key.values()] : Object.values(key);
    return values.map((v) => scalarText(v) ?? JSON.stringify(jsonSafe(v))).join(',');
  }
  return JSON.stringify(jsonSafe(key));
}

export function encodeId(id: string): string {
  return id.replaceAll('%', '%25').replaceAll(':', '%3A');
}

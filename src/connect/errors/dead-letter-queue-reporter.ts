/**
 * The dead letter queue of a sink connector (errors.deadletterqueue.topic.name): a
 * record that failed conversion, transformation or put (reported through the errant
 * record reporter) is written, with its original key, value and headers, to the DLQ
 * topic, so nothing tolerated is silently lost. With
 * errors.deadletterqueue.context.headers.enable the failure is described in Kafka
 * Connect's `__connect.errors.*` headers.
 *
 * `report` settles when the broker acknowledged the DLQ record: a sink task does not
 * commit past a tolerated record before its DLQ copy is durable.
 */
import type { ErrorReporter, ProcessingContext } from './processing-context.ts';

export const ERROR_HEADER_PREFIX = '__connect.errors.';

export interface DlqMessage {
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer>;
}

/** Sends one message to the DLQ topic (the worker's producer, acks=all). */
export type DlqSend = (topic: string, message: DlqMessage) => Promise<void>;

export class DeadLetterQueueReporter implements ErrorReporter {
  constructor(
    private readonly topic: string,
    private readonly connector: string,
    private readonly taskId: number,
    private readonly contextHeaders: boolean,
    private readonly send: DlqSend,
  ) {}

  async report(context: ProcessingContext, error: Error): Promise<void> {
    const consumed = context.consumed;
    // Kafka Connect's DLQ takes consumed records only; a source-side failure has no bytes.
    if (consumed === undefined) return;
    const headers: Record<string, Buffer> = {};
    for (const h of consumed.headers) if (h.value !== null) headers[h.key] = h.value;
    if (this.contextHeaders) Object.assign(headers, this.errorHeaders(context, error));
    await this.send(this.topic, { key: consumed.key, value: consumed.value, headers });
  }

  errorHeaders(context: ProcessingContext, error: Error): Record<string, Buffer> {
    const h: Record<string, string> = {};
    const c = context.consumed;
    if (c !== undefined) {
      h[`${ERROR_HEADER_PREFIX}topic`] = c.topic;
      h[`${ERROR_HEADER_PREFIX}partition`] = String(c.partition);
      h[`${ERROR_HEADER_PREFIX}offset`] = String(c.offset);
    }
    h[`${ERROR_HEADER_PREFIX}connector.name`] = this.connector;
    h[`${ERROR_HEADER_PREFIX}task.id`] = String(this.taskId);
    h[`${ERROR_HEADER_PREFIX}stage`] = context.stage;
    h[`${ERROR_HEADER_PREFIX}class.name`] = context.className;
    h[`${ERROR_HEADER_PREFIX}exception.class.name`] = error.name;
    h[`${ERROR_HEADER_PREFIX}exception.message`] = error.message;
    h[`${ERROR_HEADER_PREFIX}exception.stacktrace`] = error.stack ?? String(error);
    return Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Buffer.from(v, 'utf8')]));
  }
}

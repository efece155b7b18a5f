/**
 * What an error reporter needs to know about one failure: where in the pipeline it
 * happened (Kafka Connect's Stage names, which appear in logs and in the dead letter
 * queue's `__connect.errors.stage` header), which plugin class ran, and the record
 * being processed (the original consumed message for sinks, so the dead letter queue
 * receives the exact bytes that failed).
 */
import type { SourceRecord } from '../api/connect-record.ts';

export type Stage =
  | 'KEY_CONVERTER'
  | 'VALUE_CONVERTER'
  | 'HEADER_CONVERTER'
  | 'TRANSFORMATION'
  | 'TASK_PUT'
  | 'TASK_POLL'
  | 'KAFKA_PRODUCE'
  | 'KAFKA_CONSUME';

/** A message as consumed from Kafka, before conversion. */
export interface ConsumedMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: ReadonlyArray<{ key: string; value: Buffer | null }>;
}

export interface ProcessingContext {
  readonly stage: Stage;
  /** The plugin class (or runtime component) that failed. */
  readonly className: string;
  readonly consumed?: ConsumedMessage;
  readonly sourceRecord?: SourceRecord;
}

export interface ErrorReporter {
  /** Report one tolerated failure; settles when the report is durable. */
  report(context: ProcessingContext, error: Error): Promise<void>;
}

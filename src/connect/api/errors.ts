/**
 * The errors a plugin throws and the runtime interprets. Each carries a `kind`, so the
 * runtime's error handling (retry, tolerance, dead letter queue) switches on a value
 * rather than on class identity across module copies:
 *   connect    the task or connector cannot go on; it is marked FAILED with the message.
 *   retriable  a transient problem (a destination briefly unavailable); the runtime
 *              retries the same call (poll, put, flush) after a back-off, records intact.
 *   data       one record cannot be converted or transformed; subject to
 *              `errors.tolerance` (skip and report) instead of failing the task.
 * Messages say what was expected and what was found, naming the topic, field or key.
 */

export type ConnectErrorKind = 'connect' | 'retriable' | 'data';

export class ConnectException extends Error {
  readonly kind: ConnectErrorKind = 'connect';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectException';
  }
}

/** A transient failure: the same call may succeed if retried later. */
export class RetriableException extends ConnectException {
  override readonly kind: ConnectErrorKind = 'retriable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetriableException';
  }
}

/** A record's data does not match its schema or cannot be (de)serialized. */
export class DataException extends ConnectException {
  override readonly kind: ConnectErrorKind = 'data';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DataException';
  }
}

/** The kind of any thrown value: plain errors count as `connect` (fatal). */
export function errorKind(error: unknown): ConnectErrorKind {
  const kind = (error as { kind?: unknown } | null)?.kind;
  return kind === 'retriable' || kind === 'data' ? kind : 'connect';
}

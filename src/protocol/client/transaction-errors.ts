/**
 * How a transactional producer's failures reach its caller, in two kinds, as the Java
 * producer splits them:
 *   - ProducerFencedError (fatal): a newer producer with the same transactional id
 *     took over (PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH from request versions
 *     before KIP-588), or the id may not be used at all. Nothing this producer writes
 *     can commit any more; the caller closes it (a zombie task stops).
 *   - TransactionAbortableError: a send failed or the transaction could not go on;
 *     abortTransaction() ends it and the producer can begin a new one.
 */
import { ErrorCode } from '../error-codes.ts';
import { KafkaResponseError } from './cluster-client.ts';

/** Codes that mean another producer owns the transactional id now, or never will let us. */
const FENCED_CODES: ReadonlySet<number> = new Set([
  ErrorCode.PRODUCER_FENCED,
  ErrorCode.INVALID_PRODUCER_EPOCH,
  ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ErrorCode.INVALID_PRODUCER_ID_MAPPING,
]);

export class ProducerFencedError extends Error {
  override readonly name = 'ProducerFencedError';
  constructor(
    readonly transactionalId: string,
    readonly code: number,
    cause: Error,
  ) {
    super(
      `transactional producer '${transactionalId}' is fenced: another producer with the same transactional.id has taken over, or the id is refused (${cause.message}); close this producer`,
      { cause },
    );
  }
}

export class TransactionAbortableError extends Error {
  override readonly name = 'TransactionAbortableError';
  constructor(transactionalId: string, cause: Error) {
    super(
      `the transaction of '${transactionalId}' cannot commit and must be aborted: ${cause.message}`,
      { cause },
    );
  }
}

/** The error code a failure carries, looking through `cause` chains (delivery timeouts wrap). */
export function codeOf(e: unknown): number | undefined {
  for (let c: unknown = e; c instanceof Error; c = c.cause) {
    if (c instanceof KafkaResponseError) return c.code;
  }
  return undefined;
}

export function isFencing(code: number | undefined): boolean {
  return code !== undefined && FENCED_CODES.has(code);
}

/**
 * Turning errors raised below the handlers into Kafka error codes for a response.
 * LogError carries the Kafka error name (src/broker/log/errors.ts); anything else
 * is a broken invariant and is rethrown, so the router logs it and closes the
 * connection rather than answering with a made-up code.
 */
import { ErrorCode } from '../../protocol/error-codes.ts';
import { LogError } from '../log/errors.ts';

export interface ErrorAnswer {
  errorCode: number;
  errorMessage: string;
}

export function toErrorAnswer(e: unknown): ErrorAnswer {
  if (e instanceof LogError) return { errorCode: ErrorCode[e.kafkaError], errorMessage: e.message };
  throw e;
}

export const NONE = 0;

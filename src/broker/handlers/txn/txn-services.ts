/**
 * Shared pieces of the transaction handlers: the error code for a coordinator answer
 * at the request's version, and where a group's offsets live.
 */
import { ErrorCode } from '../../../protocol/error-codes.ts';
import { offsetsPartitionFor } from '../../group/offsets-topic-format.ts';
import { OFFSETS_TOPIC } from '../../group/offsets-topic-store.ts';
import type { LogManager } from '../../log/log-manager.ts';
import type { TopicPartition } from '../../txn/transaction-metadata.ts';
import { fencedErrorFor, type TxnError } from '../../txn/txn-errors.ts';
import type { RequestContext } from '../handler.ts';

export function txnErrorCode(error: TxnError, context: RequestContext): number {
  return ErrorCode[fencedErrorFor(error, context.apiKey, context.apiVersion)];
}

/** The __consumer_offsets partition holding a group's offsets (the topic exists from broker start). */
export function offsetsPartitionOf(logs: LogManager, groupId: string): TopicPartition {
  const partitions = logs.topic(OFFSETS_TOPIC)!.partitions;
  return { topic: OFFSETS_TOPIC, partition: offsetsPartitionFor(groupId, partitions) };
}

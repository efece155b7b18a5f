/**
 * TxnOffsetCommit (key 28): offsets committed as part of a transaction. The producer
 * must be current and the group's offsets partition in its open transaction
 * (AddOffsetsToTxn), else every partition carries the coordinator's refusal; then the
 * group coordinator stores the offsets as pending until the transaction's marker
 * (group/pending-txn-offsets.ts). Partitions that do not exist get
 * UNKNOWN_TOPIC_OR_PARTITION, as in OffsetCommit.
 */
import type { Message } from '../../../protocol/codec.ts';
import { ErrorCode } from '../../../protocol/error-codes.ts';
import type { OffsetCommitEntry } from '../../group/group-coordinator.ts';
import type { BrokerServices } from '../broker-services.ts';
import { partitionExists } from '../group/services.ts';
import type { RequestHandler } from '../handler.ts';
import { offsetsPartitionOf, txnErrorCode } from './txn-services.ts';

export const handleTxnOffsetCommit: RequestHandler<BrokerServices> = async (
  body,
  context,
  services,
) => {
  const answers = (body.topics as Message[]).map((t) => ({
    name: t.name as string,
    partitions: (t.partitions as Message[]).map((p) => ({
      partitionIndex: p.partitionIndex as number,
      errorCode: 0,
    })),
  }));
  const refusal =
    body.groupId === ''
      ? 'INVALID_REQUEST'
      : services.transactions.checkPartition(
          body.transactionalId,
          Number(body.producerId),
          body.producerEpoch,
          offsetsPartitionOf(services.logs, body.groupId),
        );
  if (refusal !== 'NONE') {
    const code = txnErrorCode(refusal, context);
    for (const t of answers) for (const p of t.partitions) p.errorCode = code;
    return { throttleTimeMs: 0, topics: answers };
  }
  const entries: OffsetCommitEntry[] = [];
  const pending: Array<{ errorCode: number }> = [];
  (body.topics as Message[]).forEach((t, ti) => {
    (t.partitions as Message[]).forEach((p, pi) => {
      const answer = answers[ti]!.partitions[pi]!;
      if (!partitionExists(services.logs, t.name, p.partitionIndex)) {
        answer.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
        return;
      }
      pending.push(answer);
      entries.push({
        topic: t.name,
        partition: p.partitionIndex,
        offset: Number(p.committedOffset),
        leaderEpoch: p.committedLeaderEpoch,
        metadata: p.committedMetadata,
      });
    });
  });
  const errors = await services.coordinator.commitTxnOffsets({
    groupId: body.groupId,
    producerId: Number(body.producerId),
    producerEpoch: body.producerEpoch,
    generationId: body.generationId,
    memberId: body.memberId,
    groupInstanceId: body.groupInstanceId,
    offsets: entries,
  });
  pending.forEach((answer, i) => {
    answer.errorCode = ErrorCode[errors[i]!];
  });
  return { throttleTimeMs: 0, topics: answers };
};

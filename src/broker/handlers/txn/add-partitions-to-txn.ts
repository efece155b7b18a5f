/**
 * AddPartitionsToTxn (key 24): v0-v3, the client's form with one transaction, and
 * v4, the batched form brokers send, each transaction either added to or, with
 * VerifyOnly, checked (is each partition in the producer's open transaction?).
 *
 * A partition that does not exist fails with UNKNOWN_TOPIC_OR_PARTITION and the
 * others of its transaction with OPERATION_NOT_ATTEMPTED, nothing added, as Kafka
 * answers; otherwise every partition carries the coordinator's answer. v4's
 * top-level error is always NONE: errors are per transaction and partition.
 */
import type { Message } from '../../../protocol/codec.ts';
import { ErrorCode } from '../../../protocol/error-codes.ts';
import type { TopicPartition } from '../../txn/transaction-metadata.ts';
import type { BrokerServices } from '../broker-services.ts';
import { partitionExists } from '../group/services.ts';
import type { RequestContext, RequestHandler } from '../handler.ts';
import { txnErrorCode } from './txn-services.ts';

interface TransactionRequest {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  verifyOnly: boolean;
  topics: Message[];
}

export const handleAddPartitionsToTxn: RequestHandler<BrokerServices> = async (
  body,
  context,
  services,
) => {
  if (context.apiVersion < 4) {
    const results = await answerTransaction(
      { ...(body as TransactionRequest), verifyOnly: false },
      context,
      services,
    );
    return { throttleTimeMs: 0, results };
  }
  const resultsByTransaction = await Promise.all(
    (body.transactions as TransactionRequest[]).map(async (t) => ({
      transactionalId: t.transactionalId,
      topicResults: await answerTransaction(t, context, services),
    })),
  );
  return { throttleTimeMs: 0, errorCode: 0, resultsByTransaction };
};

/** One transaction's partition results, topic by topic in request order. */
async function answerTransaction(
  t: TransactionRequest,
  context: RequestContext,
  services: BrokerServices,
): Promise<Message[]> {
  const wanted: TopicPartition[] = [];
  for (const topic of t.topics) {
    for (const partition of topic.partitions as number[])
      wanted.push({ topic: topic.name, partition });
  }
  const unknown = wanted.filter((tp) => !partitionExists(services.logs, tp.topic, tp.partition));
  let codes: number[];
  if (unknown.length > 0) {
    codes = wanted.map((tp) =>
      unknown.includes(tp)
        ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        : ErrorCode.OPERATION_NOT_ATTEMPTED,
    );
  } else if (t.verifyOnly) {
    const errors = await services.transactions.verifyPartitions(
      t.transactionalId,
      Number(t.producerId),
      t.producerEpoch,
      wanted,
    );
    codes = errors.map((e) => txnErrorCode(e, context));
  } else {
    const error = await services.transactions.addPartitions(
      t.transactionalId,
      Number(t.producerId),
      t.producerEpoch,
      wanted,
    );
    codes = wanted.map(() => txnErrorCode(error, context));
  }
  let i = 0;
  return t.topics.map((topic) => ({
    name: topic.name,
    results: (topic.partitions as number[]).map((partitionIndex) => ({
      partitionIndex,
      errorCode: codes[i++]!,
    })),
  }));
}

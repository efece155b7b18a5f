/**
 * InitProducerId (key 22).
 *
 * Without a transactional id: a new producer id with epoch 0 for an idempotent
 * producer. Ids come from ProducerIdManager, which reserves them durably in blocks,
 * so an id is never handed out twice, even across crashes.
 *
 * With a transactional id: the transaction coordinator's answer
 * (txn/transaction-coordinator.ts): the id's producer id with its epoch bumped, which
 * fences the previous producer. v3+ may name the producer id and epoch the client
 * holds (KIP-360, resuming after an abortable error); -1 means none. A fenced
 * producer gets PRODUCER_FENCED from v4, INVALID_PRODUCER_EPOCH before.
 */
import { ApiKey } from '../../protocol/api-keys.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { fencedErrorFor } from '../txn/txn-errors.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

export const handleInitProducerId: RequestHandler<BrokerServices> = async (
  body,
  context,
  services,
) => {
  if (body.transactionalId === null) {
    const producerId = await services.producerIds.allocate();
    return { throttleTimeMs: 0, errorCode: 0, producerId, producerEpoch: 0 };
  }
  const expected =
    Number(body.producerId) >= 0
      ? { producerId: Number(body.producerId), producerEpoch: body.producerEpoch as number }
      : undefined;
  const r = await services.transactions.initProducerId(
    body.transactionalId,
    body.transactionTimeoutMs,
    expected,
  );
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode[fencedErrorFor(r.error, ApiKey.InitProducerId, context.apiVersion)],
    producerId: r.producerId,
    producerEpoch: r.producerEpoch,
  };
};

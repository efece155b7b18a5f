/**
 * EndTxn (key 26): commits or aborts the producer's transaction. Answered once every
 * marker is written and the completion is in the transaction log, so a
 * read_committed reader that starts after the answer sees the outcome.
 */
import type { BrokerServices } from '../broker-services.ts';
import type { RequestHandler } from '../handler.ts';
import { txnErrorCode } from './txn-services.ts';

export const handleEndTxn: RequestHandler<BrokerServices> = async (body, context, services) => {
  const error = await services.transactions.endTxn(
    body.transactionalId,
    Number(body.producerId),
    body.producerEpoch,
    body.committed,
  );
  return { throttleTimeMs: 0, errorCode: txnErrorCode(error, context) };
};

/**
 * AddOffsetsToTxn (key 25): adds the group's `__consumer_offsets` partition to the
 * transaction, so its EndTxn writes a marker there too, which settles the offsets
 * TxnOffsetCommit stored for it.
 */
import type { BrokerServices } from '../broker-services.ts';
import type { RequestHandler } from '../handler.ts';
import { offsetsPartitionOf, txnErrorCode } from './txn-services.ts';

export const handleAddOffsetsToTxn: RequestHandler<BrokerServices> = async (
  body,
  context,
  services,
) => {
  const error =
    body.groupId === ''
      ? 'INVALID_REQUEST'
      : await services.transactions.addPartitions(
          body.transactionalId,
          Number(body.producerId),
          body.producerEpoch,
          [offsetsPartitionOf(services.logs, body.groupId)],
        );
  return { throttleTimeMs: 0, errorCode: txnErrorCode(error, context) };
};

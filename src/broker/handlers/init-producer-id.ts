/**
 * InitProducerId (key 22): a new producer id with epoch 0 for idempotent producers.
 * Ids come from ProducerIdManager, which reserves them durably in blocks, so an id
 * is never handed out twice, even across crashes.
 *
 * A transactional id is answered with UNSUPPORTED_VERSION ("the version of the API
 * is not supported"): this broker implements no transaction coordinator and does
 * not advertise the transaction APIs, and the error is fatal for the producer, so it
 * fails at once rather than retrying forever as it would on a retriable
 * coordinator error.
 */
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

export const handleInitProducerId: RequestHandler<BrokerServices> = async (
  body,
  _context,
  services,
) => {
  if (body.transactionalId !== null) {
    services.logger.warn(
      { transactionalId: body.transactionalId },
      'refused a transactional producer: transactions are not supported',
    );
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.UNSUPPORTED_VERSION,
      producerId: -1,
      producerEpoch: -1,
    };
  }
  const producerId = await services.producerIds.allocate();
  return { throttleTimeMs: 0, errorCode: 0, producerId, producerEpoch: 0 };
};

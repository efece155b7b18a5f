/**
 * CreatePartitions (key 37): raises a topic's partition count to `count` (never
 * lowers it), validateOnly. Manual assignments must name only this node.
 */
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { BrokerServices } from './broker-services.ts';
import { toErrorAnswer } from './errors.ts';
import type { RequestHandler } from './handler.ts';

export const handleCreatePartitions: RequestHandler<BrokerServices> = (
  body,
  _context,
  services,
) => {
  const results = (body.topics as Message[]).map((t) => {
    const assignments = t.assignments as Array<{ brokerIds: number[] }> | null;
    if (assignments?.some((a) => a.brokerIds.some((id) => id !== services.nodeId))) {
      return {
        name: t.name,
        errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        errorMessage: `New partitions can only be assigned to broker ${services.nodeId}.`,
      };
    }
    try {
      services.logs.createPartitions(t.name, t.count, { validateOnly: body.validateOnly === true });
      return { name: t.name, errorCode: 0, errorMessage: null };
    } catch (e) {
      return { name: t.name, ...toErrorAnswer(e) };
    }
  });
  return { throttleTimeMs: 0, results };
};

/**
 * DescribeProducers (key 61), KIP-664: each partition's producer state, with the
 * first offset of a producer's open transaction (what holds the LSO back), for
 * tools that find hanging transactions. A partition that does not exist is
 * UNKNOWN_TOPIC_OR_PARTITION.
 */
import type { Message } from '../../../protocol/codec.ts';
import { LogError } from '../../log/errors.ts';
import type { BrokerServices } from '../broker-services.ts';
import { toErrorAnswer } from '../errors.ts';
import type { RequestHandler } from '../handler.ts';

/** A single node is its own coordinator: the coordinator epoch markers carry. */
const COORDINATOR_EPOCH = 0;

export const handleDescribeProducers: RequestHandler<BrokerServices> = (
  body,
  _context,
  services,
) => ({
  throttleTimeMs: 0,
  topics: (body.topics as Message[]).map((t) => ({
    name: t.name,
    partitions: (t.partitionIndexes as number[]).map((partitionIndex) => {
      try {
        const log = services.logs.getLog(t.name, partitionIndex);
        const producers = services.producerStates.stateFor(log).activeProducers();
        return {
          partitionIndex,
          errorCode: 0,
          errorMessage: null,
          activeProducers: producers.map((p) => ({
            producerId: BigInt(p.producerId),
            producerEpoch: p.epoch,
            lastSequence: p.lastSequence,
            lastTimestamp: BigInt(p.lastTimestamp),
            coordinatorEpoch: COORDINATOR_EPOCH,
            currentTxnStartOffset: BigInt(p.currentTxnFirstOffset),
          })),
        };
      } catch (e) {
        if (!(e instanceof LogError)) throw e;
        return { partitionIndex, ...toErrorAnswer(e), activeProducers: [] };
      }
    }),
  })),
});

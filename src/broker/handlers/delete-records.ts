/**
 * DeleteRecords (key 21): advances each partition's log start offset to the given
 * offset (-1 = the high watermark); the answer's low watermark is the new start.
 */
import type { Message } from '../../protocol/codec.ts';
import type { BrokerServices } from './broker-services.ts';
import { toErrorAnswer } from './errors.ts';
import type { RequestHandler } from './handler.ts';

const HIGH_WATERMARK = -1;

export const handleDeleteRecords: RequestHandler<BrokerServices> = async (
  body,
  _context,
  services,
) => {
  const topics: Message[] = [];
  for (const t of body.topics as Message[]) {
    const partitions: Message[] = [];
    for (const p of t.partitions as Message[]) {
      try {
        const log = services.logs.getLog(t.name, p.partitionIndex);
        const requested = Number(p.offset);
        const offset = requested === HIGH_WATERMARK ? log.highWatermark : requested;
        const lowWatermark = await log.deleteRecordsBefore(offset);
        partitions.push({ partitionIndex: p.partitionIndex, lowWatermark, errorCode: 0 });
      } catch (e) {
        partitions.push({
          partitionIndex: p.partitionIndex,
          lowWatermark: -1,
          errorCode: toErrorAnswer(e).errorCode,
        });
      }
    }
    topics.push({ name: t.name, partitions });
  }
  return { throttleTimeMs: 0, topics };
};

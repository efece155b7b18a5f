/**
 * ListOffsets (key 2): -2 the log start offset (earliest), -1 the log end offset
 * (latest) or, with isolation_level 1 (read_committed, v2+), the last stable offset,
 * below which every transaction is decided; any other timestamp
 * the first offset whose record timestamp is at or after it, through the time index
 * (offset -1 when every record is older). v0 answers in the old format: a list of
 * up to maxNumOffsets offsets.
 */
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { LogError } from '../log/errors.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

const LATEST = -1;
const EARLIEST = -2;
const READ_COMMITTED = 1;

export const handleListOffsets: RequestHandler<BrokerServices> = (body, context, services) => {
  const topics = (body.topics as Message[]).map((t) => ({
    name: t.name,
    partitions: (t.partitions as Message[]).map((p) => {
      const answer = {
        partitionIndex: p.partitionIndex,
        errorCode: 0,
        oldStyleOffsets: [] as number[],
        timestamp: -1,
        offset: -1,
        leaderEpoch: 0,
      };
      try {
        const log = services.logs.getLog(t.name, p.partitionIndex);
        const ts = Number(p.timestamp);
        let found: { offset: number; timestamp: number } | undefined;
        if (ts === LATEST) {
          const latest =
            body.isolationLevel === READ_COMMITTED
              ? services.producerStates.lastStableOffset(log)
              : log.latestOffset();
          found = { offset: latest, timestamp: -1 };
        } else if (ts === EARLIEST) found = { offset: log.earliestOffset(), timestamp: -1 };
        else if (ts >= 0) found = log.offsetForTimestamp(ts);
        else {
          answer.errorCode = ErrorCode.INVALID_REQUEST;
          return answer;
        }
        if (context.apiVersion === 0) {
          answer.oldStyleOffsets = found && p.maxNumOffsets > 0 ? [found.offset] : [];
        } else if (found) {
          answer.offset = found.offset;
          answer.timestamp = found.timestamp;
        }
      } catch (e) {
        if (!(e instanceof LogError)) throw e;
        answer.errorCode = ErrorCode[e.kafkaError];
      }
      return answer;
    }),
  }));
  return { throttleTimeMs: 0, topics };
};

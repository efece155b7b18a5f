/**
 * DescribeLogDirs (key 35): the broker's one log directory, its data dir, with the size
 * of each partition's log in it.
 *
 * Per partition: the bytes of all its segments (PartitionLog.size), offset lag 0 (the
 * high watermark is the log end on a single node, and Kafka answers
 * max(high watermark - log end, 0)), and never a future log (no AlterReplicaLogDirs).
 * topics null asks for every partition; a listed partition that does not exist is left
 * out, and so is a topic left with none, as Kafka's ReplicaManager.describeLogDirs does.
 * v4 adds the volume's total and usable bytes (statfs: blocks and blocks available to
 * an unprivileged user, times the block size, as Java's FileStore reports them). A
 * data dir that cannot be stat'ed is answered as Kafka answers an offline log dir:
 * KAFKA_STORAGE_ERROR.
 * The log dir is the log manager's data dir, as an absolute path.
 */
import { statfsSync } from 'node:fs';
import type { Message } from '../../protocol/codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

export const handleDescribeLogDirs: RequestHandler<BrokerServices> = (body, _c, services) => {
  const { logs } = services;
  const requested = body.topics as Array<{ topic: string; partitions: number[] }> | null;
  const wanted =
    requested === null
      ? undefined
      : new Set(requested.flatMap((t) => t.partitions.map((p) => `${t.topic}\0${p}`)));
  const logDir = logs.dataDir;
  let volume: { totalBytes: bigint; usableBytes: bigint };
  try {
    const fs = statfsSync(logDir, { bigint: true });
    volume = { totalBytes: fs.blocks * fs.bsize, usableBytes: fs.bavail * fs.bsize };
  } catch (err) {
    services.logger.warn({ err, logDir }, 'DescribeLogDirs: cannot stat the log dir');
    return answer([
      {
        errorCode: ErrorCode.KAFKA_STORAGE_ERROR,
        logDir,
        topics: [],
        totalBytes: -1n,
        usableBytes: -1n,
      },
    ]);
  }
  const topics: Message[] = [];
  for (const t of logs.topics()) {
    const partitions: Message[] = [];
    for (let p = 0; p < t.partitions; p++) {
      if (wanted !== undefined && !wanted.has(`${t.name}\0${p}`)) continue;
      partitions.push({
        partitionIndex: p,
        partitionSize: BigInt(logs.getLog(t.name, p).size),
        offsetLag: 0n,
        isFutureKey: false,
      });
    }
    if (partitions.length > 0) topics.push({ name: t.name, partitions });
  }
  return answer([{ errorCode: ErrorCode.NONE, logDir, topics, ...volume }]);
};

function answer(results: Message[]): Message {
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, results };
}

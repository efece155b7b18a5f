/**
 * What the group handlers need from the broker: the coordinator, the topics (to refuse
 * offsets for partitions that do not exist) and this node's address for
 * FindCoordinator. The embedded broker is a single node, so it coordinates every group.
 */
import { ErrorCode } from '../../../protocol/error-codes.ts';
import type { TopicImage } from '../../group/consumer-group/assignment.ts';
import type { GroupError } from '../../group/group.ts';
import type { GroupCoordinator } from '../../group/group-coordinator.ts';
import type { LogManager } from '../../log/log-manager.ts';

export interface GroupHandlerServices {
  coordinator: GroupCoordinator;
  logs: LogManager;
  nodeId: number;
  advertisedHost: string;
  port: number;
}

export function code(error: GroupError): number {
  return ErrorCode[error];
}

export function partitionExists(logs: LogManager, topic: string, partition: number): boolean {
  const t = logs.topic(topic);
  return t !== undefined && partition >= 0 && partition < t.partitions;
}

/** The topics as the consumer group coordinator sees them: names, ids, partition counts. */
export function topicImages(logs: LogManager): TopicImage[] {
  return logs.topics().map((t) => ({ name: t.name, topicId: t.topicId, partitions: t.partitions }));
}

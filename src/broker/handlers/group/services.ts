/**
 * What the group handlers need from the broker: the coordinator, the topics (to refuse
 * offsets for partitions that do not exist) and this node's address for
 * FindCoordinator. The embedded broker is a single node, so it coordinates every group.
 */
import { ErrorCode } from '../../../protocol/error-codes.ts';
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

/** The group coordinator's request handlers by API key, registered by the broker's router. */
import { ApiKey } from '../../../protocol/api-keys.ts';
import type { RequestHandler } from '../handler.ts';
import {
  handleDeleteGroups,
  handleDescribeGroups,
  handleFindCoordinator,
  handleListGroups,
} from './admin-handlers.ts';
import {
  handleConsumerGroupDescribe,
  handleConsumerGroupHeartbeat,
} from './consumer-group-handlers.ts';
import {
  handleHeartbeat,
  handleJoinGroup,
  handleLeaveGroup,
  handleSyncGroup,
} from './membership-handlers.ts';
import { handleOffsetCommit, handleOffsetDelete, handleOffsetFetch } from './offset-handlers.ts';
import type { GroupHandlerServices } from './services.ts';

export type { GroupHandlerServices } from './services.ts';

export const groupHandlers: Record<number, RequestHandler<GroupHandlerServices>> = {
  [ApiKey.FindCoordinator]: handleFindCoordinator,
  [ApiKey.JoinGroup]: handleJoinGroup,
  [ApiKey.SyncGroup]: handleSyncGroup,
  [ApiKey.Heartbeat]: handleHeartbeat,
  [ApiKey.LeaveGroup]: handleLeaveGroup,
  [ApiKey.OffsetCommit]: handleOffsetCommit,
  [ApiKey.OffsetFetch]: handleOffsetFetch,
  [ApiKey.OffsetDelete]: handleOffsetDelete,
  [ApiKey.DescribeGroups]: handleDescribeGroups,
  [ApiKey.ListGroups]: handleListGroups,
  [ApiKey.DeleteGroups]: handleDeleteGroups,
  [ApiKey.ConsumerGroupHeartbeat]: handleConsumerGroupHeartbeat,
  [ApiKey.ConsumerGroupDescribe]: handleConsumerGroupDescribe,
};

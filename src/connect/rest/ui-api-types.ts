/**
 * The answers of the status page's own API (/ui/api: ui-topics.ts, ui-groups.ts), in a
 * module of their own without imports so that the page's browser code (ui/src) reads
 * the same types the worker answers with.
 */

export interface PartitionSummary {
  partition: number;
  leader: number;
  startOffset: number;
  endOffset: number;
}

export interface TopicSummary {
  name: string;
  internal: boolean;
  partitions: PartitionSummary[];
  /** The configs of SHOWN_TOPIC_CONFIGS the broker answered, by name. */
  configs: Record<string, string | null>;
}

/** A key, value or header value as text when it is UTF-8, else base64. */
export interface ShownBytes {
  encoding: 'utf8' | 'base64';
  data: string;
  /** Bytes in the record (before any cut). */
  size: number;
  truncated: boolean;
}

export interface TailRecord {
  partition: number;
  offset: number;
  timestamp: number;
  key: ShownBytes | null;
  value: ShownBytes | null;
  headers: Array<{ key: string; value: ShownBytes | null }>;
}

export interface PartitionTail {
  topic: string;
  partition: number;
  startOffset: number;
  /** The last stable offset: the tail ends before it. */
  endOffset: number;
  records: TailRecord[];
}

export interface GroupMember {
  memberId: string;
  clientId: string;
  clientHost: string;
  /** Partitions assigned, for `consumer` groups (by topic). */
  assignment: Array<{ topic: string; partitions: number[] }>;
}

export interface GroupPartitionLag {
  topic: string;
  partition: number;
  committedOffset: number;
  endOffset: number | null;
  lag: number | null;
}

export interface GroupSummary {
  groupId: string;
  state: string;
  protocolType: string;
  /** The assignor (`range`) or, for `connect` groups, the Connect protocol. */
  protocol: string;
  members: GroupMember[];
  offsets: GroupPartitionLag[];
  /** Sum of the partitions' lag. */
  totalLag: number;
}

export interface GroupList {
  groups: GroupSummary[];
  /** Groups past GROUPS_MAX, not described. */
  omitted: number;
}

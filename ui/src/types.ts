/** Kafka Connect's REST bodies, as the page reads them. */
export interface StateEntry {
  state: string;
  worker_id: string;
  trace?: string;
}

export interface TaskStatus extends StateEntry {
  id: number;
}

export interface ConnectorStatus {
  name: string;
  connector: StateEntry;
  tasks: TaskStatus[];
  type: string;
}

export interface ConnectorInfo {
  name: string;
  config: Record<string, string>;
  tasks: Array<{ connector: string; task: number }>;
  type: string;
}

/** GET /connectors?expand=status&expand=info */
export type ExpandedConnectors = Record<string, { status?: ConnectorStatus; info?: ConnectorInfo }>;

export interface PluginInfo {
  class: string;
  type: string;
  version: string;
}

export interface ConfigKeyInfo {
  name: string;
  type: string;
  required: boolean;
  default_value: string | null;
  importance: string;
  documentation: string;
  group: string | null;
  order: number;
  display_name: string;
}

export interface ConfigInfos {
  name: string;
  error_count: number;
  configs: Array<{
    definition: ConfigKeyInfo | null;
    value: { name: string; value: string | null; errors: string[]; visible: boolean } | null;
  }>;
}

/** The page's own API (src/connect/rest/ui-topics.ts, ui-groups.ts). */
export interface TopicSummary {
  name: string;
  internal: boolean;
  partitions: Array<{ partition: number; leader: number; startOffset: number; endOffset: number }>;
  configs: Record<string, string | null>;
}

export interface ShownBytes {
  encoding: 'utf8' | 'base64';
  data: string;
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
  endOffset: number;
  records: TailRecord[];
}

export interface GroupSummary {
  groupId: string;
  state: string;
  protocolType: string;
  protocol: string;
  members: Array<{
    memberId: string;
    clientId: string;
    clientHost: string;
    assignment: Array<{ topic: string; partitions: number[] }>;
  }>;
  offsets: Array<{
    topic: string;
    partition: number;
    committedOffset: number;
    endOffset: number | null;
    lag: number | null;
  }>;
  totalLag: number;
}

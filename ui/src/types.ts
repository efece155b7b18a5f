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

/** The page's own API (/ui/api), as the worker answers it. */
export type {
  GroupSummary,
  PartitionTail,
  ShownBytes,
  TailRecord,
  TopicSummary,
} from '../../src/connect/rest/ui-api-types.ts';

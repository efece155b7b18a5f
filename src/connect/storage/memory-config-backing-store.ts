/**
 * Connector configs, task configs and target states held in memory: standalone
 * mode's config store (Kafka Connect's MemoryConfigBackingStore). Connectors given as
 * files are written here at start; connectors created over REST live until the
 * process ends, as in Kafka's standalone mode.
 */
import type { ConnectorConfigMap, TargetState } from '../herder/herder.ts';

export interface ConnectorEntry {
  config: ConnectorConfigMap;
  targetState: TargetState;
  taskConfigs: ConnectorConfigMap[];
}

export class MemoryConfigBackingStore {
  private readonly connectors = new Map<string, ConnectorEntry>();

  names(): string[] {
    return [...this.connectors.keys()];
  }

  has(name: string): boolean {
    return this.connectors.has(name);
  }

  get(name: string): ConnectorEntry | undefined {
    return this.connectors.get(name);
  }

  putConnectorConfig(name: string, config: ConnectorConfigMap, targetState?: TargetState): void {
    const existing = this.connectors.get(name);
    this.connectors.set(name, {
      config: { ...config },
      targetState: targetState ?? existing?.targetState ?? 'RUNNING',
      taskConfigs: existing?.taskConfigs ?? [],
    });
  }

  putTaskConfigs(name: string, taskConfigs: readonly ConnectorConfigMap[]): void {
    const entry = this.connectors.get(name);
    if (entry !== undefined) entry.taskConfigs = taskConfigs.map((c) => ({ ...c }));
  }

  putTargetState(name: string, state: TargetState): void {
    const entry = this.connectors.get(name);
    if (entry !== undefined) entry.targetState = state;
  }

  remove(name: string): void {
    this.connectors.delete(name);
  }
}

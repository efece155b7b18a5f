/**
 * FileStreamSinkConnector: every task appends to the same file (as Kafka's does), so
 * with several tasks lines of different partitions interleave; order within a
 * partition is kept.
 */
import {
  type ConnectorConfig,
  parseConfigOrThrow,
  type SinkConnector,
  type TaskConfig,
} from '../../src/connect/api/index.ts';
import { sinkConfigDefs } from './file-stream-config.ts';
import { FILE_CONNECTOR_VERSION } from './version.ts';

export class FileStreamSinkConnector implements SinkConnector {
  private config: ConnectorConfig = {};

  version(): string {
    return FILE_CONNECTOR_VERSION;
  }

  start(config: ConnectorConfig): void {
    parseConfigOrThrow(sinkConfigDefs, config);
    this.config = config;
  }

  taskConfigs(maxTasks: number): TaskConfig[] {
    return Array.from({ length: maxTasks }, () => ({ ...this.config }));
  }

  stop(): void {}
}

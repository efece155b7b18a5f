/**
 * FileStreamSourceConnector: one task reads one file. Kafka's connector of the same
 * name does the same; more tasks could not split a single stream of lines.
 */
import {
  type ConnectorConfig,
  type ExactlyOnceSupport,
  parseConfigOrThrow,
  type SourceConnector,
  type TaskConfig,
} from '../../src/connect/api/index.ts';
import { sourceConfigDefs } from './file-stream-config.ts';
import { FILE_CONNECTOR_VERSION } from './version.ts';

export class FileStreamSourceConnector implements SourceConnector {
  private config: ConnectorConfig = {};

  version(): string {
    return FILE_CONNECTOR_VERSION;
  }

  start(config: ConnectorConfig): void {
    parseConfigOrThrow(sourceConfigDefs, config);
    this.config = config;
  }

  taskConfigs(_maxTasks: number): TaskConfig[] {
    return [{ ...this.config }];
  }

  /**
   * As Kafka's: exactly-once when it reads a file (appended to only), whose byte
   * positions are its offsets.
   */
  exactlyOnceSupport(config: ConnectorConfig): ExactlyOnceSupport {
    return (config.file ?? '').trim() !== '' ? 'SUPPORTED' : 'UNSUPPORTED';
  }

  stop(): void {}
}

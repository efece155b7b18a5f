/**
 * The BullMQ source connector: one task, whatever tasks.max says, because one events
 * stream has one position (a second reader would send every event twice).
 */
import type {
  ConfigError,
  ConnectorConfig,
  SourceConnector,
  TaskConfig,
} from '../../src/connect/api/index.ts';
import { validateSourceConfig } from './source-config.ts';
import { BULLMQ_SINK_VERSION } from './version.ts';

export class BullMQSourceConnector implements SourceConnector {
  private config: ConnectorConfig = {};

  version(): string {
    return BULLMQ_SINK_VERSION;
  }

  start(config: ConnectorConfig): void {
    this.config = config;
  }

  taskConfigs(): TaskConfig[] {
    return [{ ...this.config }];
  }

  validate(values: Readonly<Record<string, unknown>>): ConfigError[] {
    return validateSourceConfig(values);
  }

  stop(): void {}
}

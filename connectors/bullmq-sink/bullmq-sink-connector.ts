/**
 * The BullMQ sink connector: every task gets the connector's config unchanged; the
 * runtime spreads topic partitions over the tasks through the consumer group. Its
 * validate hook is where a bad template or an unreachable Redis fails
 * /config/validate (config.ts).
 */
import type {
  ConfigError,
  ConnectorConfig,
  SinkConnector,
  TaskConfig,
} from '../../src/connect/api/index.ts';
import { validateSinkConfig } from './config.ts';
import { BULLMQ_SINK_VERSION } from './version.ts';

export class BullMQSinkConnector implements SinkConnector {
  private config: ConnectorConfig = {};

  version(): string {
    return BULLMQ_SINK_VERSION;
  }

  start(config: ConnectorConfig): void {
    this.config = config;
  }

  taskConfigs(maxTasks: number): TaskConfig[] {
    return Array.from({ length: maxTasks }, () => ({ ...this.config }));
  }

  validate(values: Readonly<Record<string, unknown>>): ConfigError[] {
    return validateSinkConfig(values);
  }

  stop(): void {}
}

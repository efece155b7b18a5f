/**
 * The Parquet sink connector: every task gets the connector's config unchanged; the
 * runtime spreads topic partitions over the tasks through the consumer group.
 *
 * start() checks the config again: one stored before a key was refused
 * (unsupported-keys.ts) must not run without it either.
 */
import {
  type ConfigError,
  ConnectException,
  type ConnectorConfig,
  parseConfig,
  type SinkConnector,
  type TaskConfig,
} from '../../src/connect/api/index.ts';
import { parquetSinkConfigDefs, validateSinkConfig } from './config.ts';
import { PARQUET_SINK_VERSION } from './version.ts';

export class ParquetSinkConnector implements SinkConnector {
  private config: ConnectorConfig = {};

  version(): string {
    return PARQUET_SINK_VERSION;
  }

  start(config: ConnectorConfig): void {
    const parsed = parseConfig(parquetSinkConfigDefs, config);
    const errors = parsed.errors.length > 0 ? parsed.errors : validateSinkConfig(parsed.values);
    if (errors.length > 0) {
      throw new ConnectException(errors.map((e) => `${e.key}: ${e.message}`).join('; '));
    }
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

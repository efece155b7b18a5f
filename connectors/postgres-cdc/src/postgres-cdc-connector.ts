/**
 * The Postgres CDC source connector: checks the configuration and the database, and
 * hands its configuration to exactly one task. A replication slot is read by one
 * connection at a time, so, as with Debezium, tasks.max above 1 is accepted but one
 * task runs.
 */
import {
  type ConfigError,
  type ConnectorConfig,
  parseConfigOrThrow,
  type SourceConnector,
  type TaskConfig,
} from '../../../src/connect/api/index.ts';
import { postgresCdcConfigDefs, readSettings, validateCombinations } from './connector-config.ts';
import { CONNECTOR_VERSION } from './event-builder.ts';
import { checkDatabase } from './startup-check.ts';

export class PostgresCdcSourceConnector implements SourceConnector {
  private config: ConnectorConfig = {};

  version(): string {
    return CONNECTOR_VERSION;
  }

  validate(values: Readonly<Record<string, unknown>>): ConfigError[] {
    return validateCombinations(values);
  }

  /** Fails (StartupCheckError) when the database cannot serve the connector as configured. */
  async start(config: ConnectorConfig): Promise<void> {
    const settings = readSettings(parseConfigOrThrow(postgresCdcConfigDefs, config).values);
    await checkDatabase(settings);
    this.config = config;
  }

  taskConfigs(_maxTasks: number): TaskConfig[] {
    return [{ ...this.config }];
  }

  stop(): void {}
}

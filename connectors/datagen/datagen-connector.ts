/**
 * DatagenConnector: splits generation over `tasks.max` tasks. Task i of N generates
 * the sequence numbers n with n mod N = i (below `iterations` when bounded), at 1/N of
 * the connector's rate, so together they produce each number once.
 */
import {
  type ConfigError,
  ConfigException,
  type ConnectorConfig,
  type ConnectorTransactionBoundaries,
  type ExactlyOnceSupport,
  parseConfigOrThrow,
  type SourceConnector,
  type TaskConfig,
} from '../../src/connect/api/index.ts';
import { datagenConfigDefs, TASK_COUNT, TASK_INDEX } from './datagen-config.ts';
import { DATAGEN_VERSION } from './version.ts';

export class DatagenConnector implements SourceConnector {
  private config: ConnectorConfig = {};

  version(): string {
    return DATAGEN_VERSION;
  }

  validate(values: Readonly<Record<string, unknown>>): ConfigError[] {
    if (values.topic === null && values['kafka.topic'] === null) {
      return [
        {
          key: 'topic',
          value: undefined,
          message: 'Missing required configuration "topic" (or "kafka.topic")',
        },
      ];
    }
    return [];
  }

  start(config: ConnectorConfig): void {
    const { values } = parseConfigOrThrow(datagenConfigDefs, config);
    const errors = this.validate(values);
    if (errors.length > 0) throw new ConfigException(errors);
    this.config = config;
  }

  taskConfigs(maxTasks: number): TaskConfig[] {
    return Array.from({ length: maxTasks }, (_, i) => ({
      ...this.config,
      [TASK_INDEX]: String(i),
      [TASK_COUNT]: String(maxTasks),
    }));
  }

  /** Each task regenerates from its committed sequence number: nothing skipped or repeated. */
  exactlyOnceSupport(): ExactlyOnceSupport {
    return 'SUPPORTED';
  }

  /** Its tasks never call the TransactionContext. */
  canDefineTransactionBoundaries(): ConnectorTransactionBoundaries {
    return 'UNSUPPORTED';
  }

  stop(): void {}
}

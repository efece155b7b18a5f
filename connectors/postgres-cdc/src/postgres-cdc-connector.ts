/**
 * The Postgres CDC source connector: checks the configuration and the database, and
 * hands its configuration to exactly one task. A replication slot is read by one
 * connection at a time, so, as with Debezium, tasks.max above 1 is accepted but one
 * task runs.
 *
 * validate() refuses the Debezium keys this connector does not implement
 * (unsupported-keys.ts), and a slot.name that another connector of the cluster uses on
 * the same server: two connectors on one slot drop or confirm each other's changes
 * away. deleted() deals with the slot and publication a deleted connector leaves
 * (connector-deletion.ts). alterOffsets() drops the slot when the offsets are reset
 * (DELETE /connectors/{name}/offsets, or a PATCH with a null offset): starting over
 * means a new snapshot, which needs a new slot, and without offsets the task would
 * no longer know the old slot for its own and refuse it (start-plan.ts).
 * externalState() reports the slot (holder, retained WAL, lag) and the publication for
 * the connector's REST status, in any state (external-state.ts).
 */
import {
  type ConfigError,
  ConnectException,
  type ConnectorConfig,
  type ConnectorTransactionBoundaries,
  type ExactlyOnceSupport,
  parseConfigOrThrow,
  type SourceConnector,
  type SourceConnectorContext,
  type SourceOffset,
  type SourcePartition,
  type TaskConfig,
  type ValidationContext,
} from '../../../src/connect/api/index.ts';
import { postgresCdcConfigDefs, readSettings, validateCombinations } from './connector-config.ts';
import { cleanUpAfterDelete } from './connector-deletion.ts';
import { CONNECTOR_VERSION } from './event-builder.ts';
import { readExternalState } from './external-state.ts';
import { type Logger, pluginLogger } from './logger.ts';
import { dropSlotWhenInactive } from './replication-slot.ts';
import { checkDatabase, clientConfig } from './startup-check.ts';
import { negotiateTls } from './tls.ts';
import { unsupportedKeyErrors } from './unsupported-keys.ts';

/** The plugin's class name and the names it answers to (Debezium's), as index.ts registers them. */
export const CONNECTOR_CLASS = 'connect.postgres.PostgresCdcSourceConnector';
export const CONNECTOR_ALIASES = [
  'io.debezium.connector.postgresql.PostgresConnector',
  'PostgresConnector',
] as const;

/**
 * How long deleted() waits for the slot to be released before it gives up on dropping
 * it. Below the runtime's deadline for deleted() (task.shutdown.graceful.timeout.ms,
 * 5 s by default), so the drop of the publication still fits after it.
 */
const SLOT_RELEASE_TIMEOUT_MS = 4_000;

/**
 * How long an offsets reset waits for the slot to be free. Offsets change only while
 * the connector is STOPPED with no tasks, so it is free at once unless another
 * process reads it; the wait covers a task still closing its connection.
 */
const SLOT_RELEASE_ON_RESET_MS = 2_000;

const NO_CLUSTER: ValidationContext = { connectorName: null, otherConnectors: [] };

export interface PostgresCdcConnectorOptions {
  /** Where deleted() reports (tests capture it); the plugin's logger by default. */
  log?: Logger;
  slotReleaseTimeoutMs?: number;
}

export class PostgresCdcSourceConnector implements SourceConnector {
  private config: ConnectorConfig = {};
  private name: string | null = null;

  constructor(private readonly options: PostgresCdcConnectorOptions = {}) {}

  version(): string {
    return CONNECTOR_VERSION;
  }

  validate(
    values: Readonly<Record<string, unknown>>,
    context: ValidationContext = NO_CLUSTER,
  ): ConfigError[] {
    const errors = [...unsupportedKeyErrors(values), ...validateCombinations(values)];
    const slot = sharedSlot(values, context);
    if (slot) errors.push(slot);
    return errors;
  }

  /** Fails (StartupCheckError) when the database cannot serve the connector as configured. */
  async start(config: ConnectorConfig, context?: SourceConnectorContext): Promise<void> {
    // A config stored before a key was refused must not run without it either.
    const unsupported = unsupportedKeyErrors(config);
    if (unsupported.length > 0)
      throw new ConnectException(unsupported.map((e) => e.message).join('. '));
    const settings = readSettings(parseConfigOrThrow(postgresCdcConfigDefs, config).values);
    await checkDatabase(settings);
    this.config = config;
    this.name = context?.connectorName ?? null;
  }

  taskConfigs(_maxTasks: number): TaskConfig[] {
    return [{ ...this.config }];
  }

  stop(): void {}

  /**
   * Called while the connector is STOPPED (its task holds no slot). A reset of the
   * connector's partition drops its slot; a slot some other process holds is left
   * and the reset refused, naming the holder. Other offset changes leave the slot:
   * the task checks a stored LSN against it when it starts (checkResume).
   */
  async alterOffsets(
    config: ConnectorConfig,
    offsets: ReadonlyArray<{ partition: SourcePartition; offset: SourceOffset | null }>,
  ): Promise<boolean> {
    const settings = readSettings(parseConfigOrThrow(postgresCdcConfigDefs, config).values);
    const reset = offsets.some(
      (o) => o.offset === null && String(o.partition.server) === settings.topicPrefix,
    );
    if (!reset) return false;
    try {
      await negotiateTls(settings.connection, clientConfig(settings));
      const outcome = await dropSlotWhenInactive(
        clientConfig(settings),
        settings.slotName,
        SLOT_RELEASE_ON_RESET_MS,
      );
      const log =
        this.options.log ?? pluginLogger({ connector: config.name ?? settings.topicPrefix });
      if (outcome === 'dropped')
        log.info(
          `offsets reset: dropped replication slot '${settings.slotName}'; the next start takes a new snapshot`,
        );
    } catch (error) {
      throw new ConnectException(`Could not reset the offsets: ${(error as Error).message}`, {
        cause: error,
      });
    }
    return true;
  }

  /**
   * Exactly-once (KIP-618): streaming resumes from the stored position and skips what
   * it covers (lsn_commit, lsn_proc), so with transactional offsets nothing streamed is
   * repeated or lost across a crash. A snapshot a crash interrupts is taken again
   * from scratch, as Debezium does: the rows it had delivered appear once more (the
   * task logs it when that happens); a completed snapshot is never repeated.
   */
  exactlyOnceSupport(): ExactlyOnceSupport {
    return 'SUPPORTED';
  }

  /** With transaction.boundary=connector, each database transaction is one Kafka transaction. */
  canDefineTransactionBoundaries(): ConnectorTransactionBoundaries {
    return 'SUPPORTED';
  }

  externalState(config: ConnectorConfig): Promise<Record<string, unknown>> {
    return readExternalState(
      readSettings(parseConfigOrThrow(postgresCdcConfigDefs, config).values),
    );
  }

  async deleted(config: ConnectorConfig): Promise<void> {
    const settings = readSettings(parseConfigOrThrow(postgresCdcConfigDefs, config).values);
    const name = config.name ?? this.name ?? settings.topicPrefix;
    const log = this.options.log ?? pluginLogger({ connector: name });
    await cleanUpAfterDelete(
      settings,
      name,
      log,
      this.options.slotReleaseTimeoutMs ?? SLOT_RELEASE_TIMEOUT_MS,
    );
  }
}

/** Whether a connector.class names this plugin (full name, alias, or simple name). */
function isPostgresCdc(connectorClass: string | undefined): boolean {
  if (!connectorClass) return false;
  const names = [CONNECTOR_CLASS, ...CONNECTOR_ALIASES];
  const simple = (n: string) => n.slice(n.lastIndexOf('.') + 1).replace(/Connector$/, '');
  return names.includes(connectorClass) || names.map(simple).includes(simple(connectorClass));
}

/** One name for a server whatever the user wrote for it, as far as a config can tell. */
function serverKey(host: string, port: string | number): string {
  const h = host.trim().toLowerCase();
  const loopback = h === 'localhost' || h === '::1' || h.startsWith('127.');
  return `${loopback ? 'localhost' : h}:${String(port).trim()}`;
}

/**
 * The error for a slot.name another Postgres CDC connector of the cluster uses on the
 * same server. Slot names are unique per server, not per database, so the database
 * does not enter the comparison: on another database of the server the slot would
 * clash all the same ("slot belongs to database ...").
 */
function sharedSlot(
  values: Readonly<Record<string, unknown>>,
  context: ValidationContext,
): ConfigError | null {
  const slot = values['slot.name'] as string;
  const host = values['database.hostname'] as string;
  const server = serverKey(host, values['database.port'] as number);
  for (const other of context.otherConnectors) {
    const c = other.config;
    if (!isPostgresCdc(c['connector.class']) || c['database.hostname'] === undefined) continue;
    if ((c['slot.name'] ?? 'debezium') !== slot) continue;
    if (serverKey(c['database.hostname'], c['database.port'] ?? '5432') !== server) continue;
    return {
      key: 'slot.name',
      value: slot,
      message:
        `Replication slot '${slot}' on ${host}:${values['database.port']} is already used by connector ` +
        `'${other.name}' (database ${c['database.dbname'] ?? '?'}): a slot serves one reader, and two ` +
        "connectors on it would take, or drop, each other's changes. Give this connector its own slot.name",
    };
  }
  return null;
}

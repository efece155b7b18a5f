/**
 * Exactly-once source support (KIP-618): the worker's mode, the connector keys, the
 * validation Kafka Connect does, and zombie fencing of transactional ids.
 *
 * Worker (`exactly.once.source.support`, distributed mode only):
 *   disabled   source tasks are at-least-once (periodic offset commits);
 *   preparing  the same, on a worker that is being upgraded: its internal-topic
 *              readers already skip aborted records (they always do here), so a
 *              cluster can move to `enabled` one worker at a time;
 *   enabled    every source task runs exactly-once (worker-source-task.ts): a
 *              transactional producer with id `<group.id>-<connector>-<task>`, its
 *              records and their offsets committed in one transaction, after the
 *              leader fenced the connector's earlier task generations.
 * Standalone mode refuses `enabled` and `preparing`, as Kafka's standalone worker has
 * no exactly-once support.
 *
 * Connector keys: `exactly.once.support` (requested | required) and
 * `transaction.boundary` (poll | interval | connector) with
 * `transaction.boundary.interval.ms`; validation adds Kafka's messages. A connector's
 * own offsets topic (`offsets.storage.topic`, connector-offset-stores.ts) is refused in
 * standalone mode.
 *
 * Status and logs (taskDeliveryNotice): every source task's start logs which delivery
 * it runs (an exactly-once task its transactional id, once registered) and, at WARN,
 * why a connector that asked for exactly-once runs without it; with `required` the
 * reason is also the trace of its RUNNING status. Kafka's status body has no field
 * for the mode, and none is added.
 */

import { ClusterClient } from '../../protocol/client/cluster-client.ts';
import { TransactionalProducer } from '../../protocol/client/transactional-producer.ts';
import type { ConnectorConfig, SourceConnector } from '../api/connector.ts';
import type { ConnectorTaskId } from '../herder/herder.ts';
import type { TransactionBoundary } from './source-transactions.ts';

export type ExactlyOnceMode = 'disabled' | 'preparing' | 'enabled';

/** The worker's exactly.once.source.support (disabled when absent). */
export function exactlyOnceMode(worker: Readonly<Record<string, unknown>>): ExactlyOnceMode {
  const value = String(worker['exactly.once.source.support'] ?? 'disabled').toLowerCase();
  return value === 'enabled' || value === 'preparing' ? value : 'disabled';
}

/** Standalone mode: the message that refuses exactly-once, or null when it is off. */
export function standaloneExactlyOnceError(
  worker: Readonly<Record<string, unknown>>,
): string | null {
  if (exactlyOnceMode(worker) === 'disabled') return null;
  return `Kafka Connect in standalone mode does not support exactly-once source connectors; run \`connect worker\` (distributed mode, where one worker is a cluster of one) for exactly-once sources`;
}

/**
 * Standalone mode and a connector's own offsets topic: Kafka ignores the key there
 * (its standalone worker keeps offsets in a file); this worker refuses it by name.
 */
export const standaloneOffsetsTopicError =
  "not supported in standalone mode: a connector's own offsets topic; standalone mode keeps every connector's offsets in offset.storage.file.filename (remove this key, or run `connect worker`)";

/** Kafka Connect's transactional id of a source task (Worker.taskTransactionalId). */
export function taskTransactionalId(groupId: string, id: ConnectorTaskId): string {
  return `${groupId}-${id.connector}-${id.task}`;
}

export function transactionBoundaryOf(config: ConnectorConfig): TransactionBoundary {
  const value = (config['transaction.boundary'] ?? 'poll').trim().toLowerCase();
  return value === 'interval' || value === 'connector' ? value : 'poll';
}

/** transaction.boundary.interval.ms, else the worker's offset.flush.interval.ms. */
export function transactionIntervalMs(
  config: ConnectorConfig,
  offsetFlushIntervalMs: number,
): number {
  const raw = config['transaction.boundary.interval.ms'];
  const n = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : offsetFlushIntervalMs;
}

/**
 * Kafka's KIP-618 validation of a source connector config, by key (empty: valid).
 * `workerEnabled`: whether this worker runs exactly-once sources.
 */
export function exactlyOnceValidationErrors(
  connector: SourceConnector,
  raw: ConnectorConfig,
  workerEnabled: boolean,
  connectorOffsetsTopics = true,
): Map<string, string[]> {
  const errors = new Map<string, string[]>();
  const add = (key: string, message: string) => {
    const list = errors.get(key) ?? [];
    list.push(message);
    errors.set(key, list);
  };
  const ownTopic = raw['offsets.storage.topic'];
  if (!connectorOffsetsTopics && ownTopic !== undefined && ownTopic !== '')
    add('offsets.storage.topic', standaloneOffsetsTopicError);
  const support = (raw['exactly.once.support'] ?? 'requested').trim().toLowerCase();
  if (support === 'required') {
    if (!workerEnabled)
      add('exactly.once.support', 'This worker does not have exactly-once source support enabled.');
    const answer = guarded(() => connector.exactlyOnceSupport?.(raw) ?? null);
    if (answer instanceof Error) add('exactly.once.support', unexpected(answer));
    else if (answer === null)
      add(
        'exactly.once.support',
        'The connector does not implement the API required for preflight validation of exactly-once source support. Please consult the documentation for the connector to determine whether it supports exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" for this property (which will disable this preflight check and allow the connector to be created).',
      );
    else if (answer !== 'SUPPORTED')
      add(
        'exactly.once.support',
        'The connector does not support exactly-once semantics with the provided configuration.',
      );
  }
  if (transactionBoundaryOf(raw) === 'connector') {
    const answer = guarded(() => connector.canDefineTransactionBoundaries?.(raw) ?? 'UNSUPPORTED');
    if (answer instanceof Error) add('transaction.boundary', unexpected(answer));
    else if (answer !== 'SUPPORTED')
      add(
        'transaction.boundary',
        'The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition.',
      );
  }
  return errors;
}

/**
 * What a source task's start says about its delivery (besides the INFO line an
 * exactly-once task logs once its transactional producer registered): at-least-once
 * always says why; a warning when the connector asked for exactly-once and does not
 * get it, or gets it without declaring support. `trace`: the task's RUNNING status
 * carries it (task-trouble.ts), when the connector *required* exactly-once: a status
 * reader sees why, in Kafka's status body as it is.
 */
export interface TaskDeliveryNotice {
  level: 'info' | 'warn';
  message: string;
  trace?: string;
}

export function taskDeliveryNotice(
  task: string,
  mode: ExactlyOnceMode,
  connector: SourceConnector,
  config: ConnectorConfig,
): TaskDeliveryNotice | null {
  const support = (config['exactly.once.support'] ?? '').trim().toLowerCase();
  if (mode === 'enabled') {
    // `required` passed validation with SUPPORTED; `requested` is not asked (as in Kafka).
    if (support === 'required') return null;
    const answer = guarded(() => connector.exactlyOnceSupport?.(config) ?? null);
    if (answer === 'SUPPORTED') return null;
    const said =
      answer instanceof Error
        ? `its exactlyOnceSupport() failed: ${answer.message}`
        : answer === null
          ? 'it does not implement exactlyOnceSupport()'
          : 'it answers UNSUPPORTED for this configuration';
    return {
      level: 'warn',
      message: `Task ${task} runs exactly-once, but its connector does not declare exactly-once support (${said}): its records and offsets are committed together, yet the connector may not resume exactly where it left off`,
    };
  }
  const why = mode === 'preparing' ? 'preparing, a rolling-upgrade step' : mode;
  // Kafka accepts these without exactly-once and they do nothing then: say so.
  const given = [
    'exactly.once.support',
    'transaction.boundary',
    'transaction.boundary.interval.ms',
  ].filter((k) => config[k] !== undefined);
  if (given.length === 0)
    return {
      level: 'info',
      message: `Task ${task} runs at-least-once (exactly.once.source.support=${mode} on this worker)`,
    };
  return {
    level: 'warn',
    message: `Task ${task} runs at-least-once: ${given.join(' and ')} take effect only with exactly.once.source.support=enabled on the worker (it is ${why})`,
    ...(support === 'required'
      ? {
          trace: `exactly.once.support=required, but this task runs at-least-once: its worker has exactly.once.source.support=${why}`,
        }
      : {}),
  };
}

function guarded<T>(call: () => T): T | Error {
  try {
    return call();
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

function unexpected(e: Error): string {
  const message = e.message.trim();
  return message === ''
    ? 'An unexpected error occurred during validation; please see the worker logs for more details.'
    : `An unexpected error occurred during validation: ${message}`;
}

/**
 * Fences the producers of the given transactional ids (the Admin client's
 * fenceProducers): InitProducerId for each id bumps its epoch, so a zombie holding an
 * older epoch can neither write nor commit, and a transaction it left open is aborted.
 */
export async function fenceProducers(
  bootstrapServers: readonly string[],
  transactionalIds: readonly string[],
  clientId: string,
): Promise<void> {
  await Promise.all(
    transactionalIds.map(async (transactionalId) => {
      const producer = new TransactionalProducer(
        new ClusterClient([...bootstrapServers], { clientId }),
        { transactionalId, maxBlockMs: 30_000 },
      );
      try {
        await producer.init();
      } finally {
        producer.close();
      }
    }),
  );
}

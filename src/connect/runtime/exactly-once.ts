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
 * `transaction.boundary.interval.ms`; validation adds Kafka's messages.
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
): Map<string, string[]> {
  const errors = new Map<string, string[]>();
  const add = (key: string, message: string) => {
    const list = errors.get(key) ?? [];
    list.push(message);
    errors.set(key, list);
  };
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

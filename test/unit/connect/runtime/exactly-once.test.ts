/**
 * KIP-618 pieces that need no broker: the validation messages (Kafka's
 * DistributedHerder texts), standalone mode's refusal, transactional ids, and where
 * TransactionBoundaries ends transactions for each `transaction.boundary`.
 */
import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../../src/connect/api/connect-record.ts';
import type { SourceConnector } from '../../../../src/connect/api/connector.ts';
import {
  exactlyOnceValidationErrors,
  standaloneExactlyOnceError,
  taskTransactionalId,
  transactionIntervalMs,
} from '../../../../src/connect/runtime/exactly-once.ts';
import { TransactionBoundaries } from '../../../../src/connect/runtime/source-transactions.ts';

function connector(hooks: Partial<SourceConnector> = {}): SourceConnector {
  return {
    version: () => '1',
    start: () => undefined,
    taskConfigs: () => [],
    stop: () => undefined,
    ...hooks,
  };
}

const required = { 'exactly.once.support': 'required' };

describe('KIP-618 validation', () => {
  it('answers each rejection with Kafka message', () => {
    expect(exactlyOnceValidationErrors(connector(), required, true)).toEqual(
      new Map([
        [
          'exactly.once.support',
          [
            'The connector does not implement the API required for preflight validation of exactly-once source support. Please consult the documentation for the connector to determine whether it supports exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" for this property (which will disable this preflight check and allow the connector to be created).',
          ],
        ],
      ]),
    );
    const unsupported = connector({ exactlyOnceSupport: () => 'UNSUPPORTED' });
    expect(
      exactlyOnceValidationErrors(unsupported, required, true).get('exactly.once.support'),
    ).toEqual([
      'The connector does not support exactly-once semantics with the provided configuration.',
    ]);
    const supported = connector({ exactlyOnceSupport: () => 'SUPPORTED' });
    expect(
      exactlyOnceValidationErrors(supported, required, false).get('exactly.once.support'),
    ).toEqual(['This worker does not have exactly-once source support enabled.']);
    expect(exactlyOnceValidationErrors(supported, required, true).size).toBe(0);
    // `requested` asks nothing of the connector or the worker.
    expect(
      exactlyOnceValidationErrors(connector(), { 'exactly.once.support': 'REQUESTED' }, false).size,
    ).toBe(0);

    const boundary = { 'transaction.boundary': 'Connector' };
    expect(
      exactlyOnceValidationErrors(connector(), boundary, true).get('transaction.boundary'),
    ).toEqual([
      'The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition.',
    ]);
    const defines = connector({ canDefineTransactionBoundaries: () => 'SUPPORTED' });
    expect(exactlyOnceValidationErrors(defines, boundary, true).size).toBe(0);
    const throwing = connector({
      exactlyOnceSupport: () => {
        throw new Error('  no database  ');
      },
    });
    expect(
      exactlyOnceValidationErrors(throwing, required, true).get('exactly.once.support'),
    ).toEqual(['An unexpected error occurred during validation: no database']);
  });

  it('refuses exactly-once in standalone mode, and names transactional ids as Kafka does', () => {
    expect(standaloneExactlyOnceError({})).toBeNull();
    expect(standaloneExactlyOnceError({ 'exactly.once.source.support': 'disabled' })).toBeNull();
    expect(standaloneExactlyOnceError({ 'exactly.once.source.support': 'enabled' })).toMatch(
      /^Kafka Connect in standalone mode does not support exactly-once source connectors/,
    );
    expect(
      standaloneExactlyOnceError({ 'exactly.once.source.support': 'preparing' }),
    ).not.toBeNull();
    expect(taskTransactionalId('connect-cluster', { connector: 'pg', task: 3 })).toBe(
      'connect-cluster-pg-3',
    );
    expect(transactionIntervalMs({}, 60_000)).toBe(60_000);
    expect(transactionIntervalMs({ 'transaction.boundary.interval.ms': '250' }, 60_000)).toBe(250);
  });
});

function record(n: number): SourceRecord {
  return { sourcePartition: { p: 0 }, sourceOffset: { n }, topic: 't', value: n };
}

describe('TransactionBoundaries', () => {
  it('poll: one transaction per batch that had records', () => {
    const b = new TransactionBoundaries('poll', 0, 0);
    expect(b.context()).toBeNull();
    expect(b.afterRecord(record(1))).toBeNull();
    expect(b.afterBatch(1, true)).toBe('commit');
    expect(b.afterBatch(2, false)).toBeNull();
    expect(b.final(3)).toBe('commit');
  });

  it('interval: commits once the interval passed since the last commit', () => {
    const b = new TransactionBoundaries('interval', 100, 1000);
    expect(b.afterBatch(1050, true)).toBeNull();
    expect(b.afterBatch(1100, false)).toBe('commit');
    expect(b.afterBatch(1150, true)).toBeNull();
    expect(b.afterBatch(1200, true)).toBe('commit');
  });

  it('connector: where the task asks, and never both at one point', () => {
    const b = new TransactionBoundaries('connector', 0, 0);
    const ctx = b.context()!;
    const [a, c, d] = [record(1), record(2), record(3)];
    ctx.commitTransaction(a);
    ctx.abortTransaction(d);
    expect(b.afterRecord(a)).toBe('commit');
    expect(b.afterRecord(a)).toBeNull();
    expect(b.afterRecord(c)).toBeNull();
    expect(b.afterRecord(d)).toBe('abort');
    expect(b.afterBatch(0, true)).toBeNull();
    ctx.commitTransaction();
    expect(b.afterBatch(0, true)).toBe('commit');
    expect(b.final(0)).toBeNull();
    ctx.abortTransaction();
    expect(b.final(0)).toBe('abort');
    ctx.commitTransaction(c);
    ctx.abortTransaction(c);
    expect(() => b.afterRecord(c)).toThrow(/both commit and abort of same record/);
    ctx.commitTransaction();
    ctx.abortTransaction();
    expect(() => b.afterBatch(0, true)).toThrow(
      'Connector requested both commit and abort of same transaction',
    );
  });
});

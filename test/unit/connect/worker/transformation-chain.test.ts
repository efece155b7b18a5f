import { describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../../src/connect/api/index.ts';
import { errorHandlingConfig } from '../../../../src/connect/errors/error-handling-config.ts';
import type {
  ErrorReporter,
  ProcessingContext,
} from '../../../../src/connect/errors/processing-context.ts';
import {
  RetryWithToleranceOperator,
  skipped,
  ToleranceExceededError,
} from '../../../../src/connect/errors/retry-with-tolerance-operator.ts';
import { TransformationChain } from '../../../../src/connect/runtime/transformation-chain.ts';
import { dropCalls, testRegistry } from './plugin-fixtures.ts';

const record: SourceRecord = {
  topic: 'orders',
  value: 'hello',
  sourcePartition: { f: 'a' },
  sourceOffset: { p: 1 },
};

function operator(config: Record<string, string> = {}, reporters: ErrorReporter[] = []) {
  return new RetryWithToleranceOperator(errorHandlingConfig(config), reporters, {
    now: () => 0,
    sleep: async () => true,
  });
}

function chain(config: Record<string, string>) {
  return TransformationChain.fromConfig(testRegistry(), config);
}

describe('TransformationChain', () => {
  it('applies transforms in the order of the transforms list', () => {
    const c = chain({
      transforms: 'first,second',
      'transforms.first.type': 'org.apache.kafka.connect.transforms.RegexRouter',
      'transforms.first.regex': 'orders',
      'transforms.first.replacement': 'orders-v2',
      'transforms.second.type': 'RegexRouter',
      'transforms.second.regex': '(.*)-v2',
      'transforms.second.replacement': 'archive.$1',
    });
    expect(c.apply(record, operator(), {})).toEqual({ ...record, topic: 'archive.orders' });
  });

  it('applies a guarded transform only where its predicate matches, inverted by negate', () => {
    const config = {
      transforms: 'route',
      'transforms.route.type': 'RegexRouter',
      'transforms.route.regex': '.*',
      'transforms.route.replacement': 'routed',
      'transforms.route.predicate': 'isOrders',
      predicates: 'isOrders',
      'predicates.isOrders.type': 'org.apache.kafka.connect.transforms.predicates.TopicNameMatches',
      'predicates.isOrders.pattern': 'orders',
    };
    const plain = chain(config);
    expect((plain.apply(record, operator(), {}) as SourceRecord).topic).toBe('routed');
    expect((plain.apply({ ...record, topic: 'users' }, operator(), {}) as SourceRecord).topic).toBe(
      'users',
    );
    const negated = chain({ ...config, 'transforms.route.negate': 'true' });
    expect((negated.apply(record, operator(), {}) as SourceRecord).topic).toBe('orders');
    expect(
      (negated.apply({ ...record, topic: 'users' }, operator(), {}) as SourceRecord).topic,
    ).toBe('routed');
  });

  it('ends the chain when a transform drops the record', () => {
    const c = chain({
      transforms: 'drop,count',
      'transforms.drop.type': 'test.DropNulls',
      'transforms.count.type': 'test.DropNulls',
    });
    dropCalls.count = 0;
    expect(c.apply({ ...record, value: null }, operator(), {})).toBeNull();
    expect(dropCalls.count).toBe(1);
    expect(chain({}).apply(record, operator(), {})).toBe(record);
  });

  it('fails on bad data with errors.tolerance=none, naming the stage and class', () => {
    const c = chain({ transforms: 'check', 'transforms.check.type': 'test.RejectBad' });
    let thrown: unknown;
    try {
      c.apply({ ...record, value: 'bad' }, operator(), {});
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ToleranceExceededError);
    expect((thrown as Error).message).toContain('TRANSFORMATION');
    expect((thrown as Error).message).toContain('test.RejectBad');
    expect(((thrown as Error).cause as Error).message).toBe('value "bad" is not allowed');
  });

  it('skips and reports bad data with errors.tolerance=all', async () => {
    const reports: Array<[ProcessingContext, Error]> = [];
    const op = operator({ 'errors.tolerance': 'all' }, [
      { report: async (ctx, e) => void reports.push([ctx, e]) },
    ]);
    const c = chain({ transforms: 'check', 'transforms.check.type': 'test.RejectBad' });
    expect(c.apply({ ...record, value: 'bad' }, op, { sourceRecord: record })).toBe(skipped);
    expect(c.apply(record, op, {})).toBe(record);
    await op.awaitReports();
    expect(reports).toHaveLength(1);
    expect(reports[0]![0]).toMatchObject({ stage: 'TRANSFORMATION', className: 'test.RejectBad' });
    expect(op.toleratedErrors).toBe(1);
  });

  it('refuses an unknown transform class or a predicate alias not in predicates', () => {
    expect(() => chain({ transforms: 'x', 'transforms.x.type': 'NoSuchTransform' })).toThrow(
      /transforms\.x\.type.*could not be found/,
    );
    expect(() =>
      chain({
        transforms: 'x',
        'transforms.x.type': 'RegexRouter',
        'transforms.x.regex': 'a',
        'transforms.x.replacement': 'b',
        'transforms.x.predicate': 'p',
      }),
    ).toThrow(/Predicate alias p is not in the predicates list/);
  });
});

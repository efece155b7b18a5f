import { describe, expect, it } from 'vitest';
import { DataException, RetriableException } from '../../../../src/connect/api/index.ts';
import {
  DeadLetterQueueReporter,
  type DlqMessage,
} from '../../../../src/connect/errors/dead-letter-queue-reporter.ts';
import { errorHandlingConfig } from '../../../../src/connect/errors/error-handling-config.ts';
import { LogReporter } from '../../../../src/connect/errors/log-reporter.ts';
import type {
  ConsumedMessage,
  ProcessingContext,
} from '../../../../src/connect/errors/processing-context.ts';
import {
  RetryWithToleranceOperator,
  skipped,
  ToleranceExceededError,
} from '../../../../src/connect/errors/retry-with-tolerance-operator.ts';
import { ManualClock } from '../../../../src/util/clock.ts';
import { getLogger } from '../../../../src/util/logger.ts';

/** An operator whose sleeps advance a manual clock (no real waiting). */
function operatorWith(
  config: Record<string, string>,
  reporters = [] as ConstructorParameters<typeof RetryWithToleranceOperator>[1],
) {
  const clock = new ManualClock();
  const sleeps: number[] = [];
  const op = new RetryWithToleranceOperator(errorHandlingConfig(config), reporters, {
    now: () => clock.now(),
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.advance(ms);
      return true;
    },
  });
  return { op, sleeps };
}

const consumed: ConsumedMessage = {
  topic: 'orders',
  partition: 2,
  offset: 41,
  timestamp: 1_700_000_000_000,
  key: Buffer.from('k'),
  value: Buffer.from('{not json'),
  headers: [{ key: 'trace', value: Buffer.from('abc') }],
};

describe('RetryWithToleranceOperator', () => {
  it('retries a retriable failure with doubling back-off until it succeeds', async () => {
    const { op, sleeps } = operatorWith({ 'errors.retry.timeout': '10000' });
    let calls = 0;
    const result = await op.executeAsync({ stage: 'TASK_PUT', className: 'X' }, async () => {
      if (++calls < 4) throw new RetriableException('busy');
      return 'done';
    });
    expect(result).toBe('done');
    expect(sleeps).toEqual([300, 600, 1200]);
  });

  it('caps the back-off at errors.retry.delay.max.ms and stops at errors.retry.timeout', async () => {
    const { op, sleeps } = operatorWith({
      'errors.retry.timeout': '2000',
      'errors.retry.delay.max.ms': '500',
    });
    await expect(
      op.executeAsync({ stage: 'TASK_PUT', className: 'X' }, async () => {
        throw new RetriableException('busy');
      }),
    ).rejects.toBeInstanceOf(ToleranceExceededError);
    expect(sleeps).toEqual([300, 500, 500, 500, 200]);
  });

  it('does not retry without errors.retry.timeout, nor errors that are not retriable', async () => {
    const { op, sleeps } = operatorWith({
      'errors.retry.timeout': '10000',
      'errors.tolerance': 'all',
    });
    const out = await op.executeAsync({ stage: 'TASK_PUT', className: 'X' }, async () => {
      throw new DataException('bad');
    });
    expect(out).toBe(skipped);
    expect(sleeps).toEqual([]);
  });

  it('fails with the original error as cause under errors.tolerance=none', () => {
    const { op } = operatorWith({});
    const error = new DataException('Unexpected character');
    expect(() =>
      op.execute('VALUE_CONVERTER', 'JsonConverter', {}, () => {
        throw error;
      }),
    ).toThrow(expect.objectContaining({ cause: error }));
  });

  it('reports the consumed message of a record context that makes it on demand', async () => {
    const reports: ProcessingContext[] = [];
    const { op } = operatorWith({ 'errors.tolerance': 'all' }, [
      {
        report: async (context) => {
          reports.push(context);
        },
      },
    ]);
    // The sink runner's context: `consumed` is a getter on a class (not an own
    // property, so a spread would lose it), made only when a failure asks.
    class Lazy {
      get consumed() {
        return consumed;
      }
    }
    const lazy = new Lazy();
    const result = op.execute('VALUE_CONVERTER', 'JsonConverter', lazy, () => {
      throw new DataException('bad');
    });
    expect(result).toBe(skipped);
    await op.awaitReports();
    expect(reports).toEqual([
      { stage: 'VALUE_CONVERTER', className: 'JsonConverter', consumed, sourceRecord: undefined },
    ]);
  });

  it('surfaces a failed dead letter queue write before offsets are committed', async () => {
    const { op } = operatorWith({ 'errors.tolerance': 'all' }, [
      { report: async () => Promise.reject(new Error('DLQ topic unavailable')) },
    ]);
    op.execute('VALUE_CONVERTER', 'JsonConverter', { consumed }, () => {
      throw new DataException('bad');
    });
    await expect(op.awaitReports()).rejects.toThrow(/dead letter queue/);
  });
});

describe('DeadLetterQueueReporter', () => {
  it("writes the original bytes and headers, plus Kafka Connect's error headers when enabled", async () => {
    const sent: Array<[string, DlqMessage]> = [];
    const dlq = new DeadLetterQueueReporter(
      'dlq',
      'sink',
      3,
      true,
      async (topic, m) => void sent.push([topic, m]),
    );
    await dlq.report(
      { stage: 'VALUE_CONVERTER', className: 'JsonConverter', consumed },
      new DataException('Unexpected character'),
    );
    expect(sent).toHaveLength(1);
    const [topic, m] = sent[0]!;
    expect(topic).toBe('dlq');
    expect(m.key?.toString()).toBe('k');
    expect(m.value?.toString()).toBe('{not json');
    const h = Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, v.toString()]));
    expect(h).toMatchObject({
      trace: 'abc',
      '__connect.errors.topic': 'orders',
      '__connect.errors.partition': '2',
      '__connect.errors.offset': '41',
      '__connect.errors.connector.name': 'sink',
      '__connect.errors.task.id': '3',
      '__connect.errors.stage': 'VALUE_CONVERTER',
      '__connect.errors.class.name': 'JsonConverter',
      '__connect.errors.exception.class.name': 'DataException',
      '__connect.errors.exception.message': 'Unexpected character',
    });
    expect(h['__connect.errors.exception.stacktrace']).toContain(
      'DataException: Unexpected character',
    );
  });

  it('adds no error headers unless enabled', async () => {
    const sent: DlqMessage[] = [];
    const dlq = new DeadLetterQueueReporter(
      'dlq',
      'sink',
      0,
      false,
      async (_t, m) => void sent.push(m),
    );
    await dlq.report({ stage: 'TASK_PUT', className: 'X', consumed }, new Error('x'));
    expect(Object.keys(sent[0]!.headers)).toEqual(['trace']);
  });
});

describe('LogReporter', () => {
  it("names the task, stage, class and the consumed record's coordinates", () => {
    const log = new LogReporter('sink-0', getLogger('test'), false);
    expect(log.message({ stage: 'VALUE_CONVERTER', className: 'JsonConverter', consumed })).toBe(
      "Error encountered in task sink-0. Executing stage 'VALUE_CONVERTER' with class 'JsonConverter', where consumed record is {topic='orders', partition=2, offset=41, timestamp=1700000000000}.",
    );
  });
});

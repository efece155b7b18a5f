/**
 * What a source task's start says about its delivery: at-least-once always with its
 * reason, a warning when the connector asked for exactly-once and runs without it (or
 * runs with it without declaring support), and a status trace when it was required.
 */
import { describe, expect, it } from 'vitest';
import type { SourceConnector } from '../../../../src/connect/api/connector.ts';
import { taskDeliveryNotice } from '../../../../src/connect/runtime/exactly-once.ts';

function connector(answer?: 'SUPPORTED' | 'UNSUPPORTED' | 'throws'): SourceConnector {
  const c = {
    version: () => '1',
    start: () => {},
    taskConfigs: () => [],
    stop: () => {},
  } as unknown as SourceConnector;
  if (answer === undefined) return c;
  return {
    ...c,
    exactlyOnceSupport: () => {
      if (answer === 'throws') throw new Error('no idea');
      return answer;
    },
  } as SourceConnector;
}

describe('taskDeliveryNotice', () => {
  it('an at-least-once task names the worker mode at INFO when nothing asked for more', () => {
    expect(taskDeliveryNotice('gen-0', 'disabled', connector(), {})).toEqual({
      level: 'info',
      message:
        'Task gen-0 runs at-least-once (exactly.once.source.support=disabled on this worker)',
    });
    expect(taskDeliveryNotice('gen-0', 'preparing', connector(), {})?.message).toBe(
      'Task gen-0 runs at-least-once (exactly.once.source.support=preparing on this worker)',
    );
  });

  it('a connector that asks for exactly-once on a worker without it gets a WARN naming the reason', () => {
    expect(
      taskDeliveryNotice('gen-0', 'preparing', connector('SUPPORTED'), {
        'exactly.once.support': 'requested',
        'transaction.boundary': 'poll',
      }),
    ).toEqual({
      level: 'warn',
      message:
        'Task gen-0 runs at-least-once: exactly.once.support and transaction.boundary take effect only with exactly.once.source.support=enabled on the worker (it is preparing, a rolling-upgrade step)',
    });
  });

  it('exactly.once.support=required without it also puts the reason in the RUNNING status trace', () => {
    const notice = taskDeliveryNotice('gen-0', 'disabled', connector('SUPPORTED'), {
      'exactly.once.support': 'required',
    });
    expect(notice?.level).toBe('warn');
    expect(notice?.trace).toBe(
      'exactly.once.support=required, but this task runs at-least-once: its worker has exactly.once.source.support=disabled',
    );
  });

  it('exactly-once with a connector that declares support says nothing more', () => {
    expect(taskDeliveryNotice('gen-0', 'enabled', connector('SUPPORTED'), {})).toBeNull();
    expect(
      taskDeliveryNotice('gen-0', 'enabled', connector(), { 'exactly.once.support': 'required' }),
    ).toBeNull();
  });

  it('exactly-once for a connector without declared support warns that it may not resume exactly', () => {
    const messages = [connector(), connector('UNSUPPORTED'), connector('throws')].map(
      (c) => taskDeliveryNotice('gen-0', 'enabled', c, {})?.message,
    );
    expect(messages).toEqual([
      'Task gen-0 runs exactly-once, but its connector does not declare exactly-once support (it does not implement exactlyOnceSupport()): its records and offsets are committed together, yet the connector may not resume exactly where it left off',
      'Task gen-0 runs exactly-once, but its connector does not declare exactly-once support (it answers UNSUPPORTED for this configuration): its records and offsets are committed together, yet the connector may not resume exactly where it left off',
      'Task gen-0 runs exactly-once, but its connector does not declare exactly-once support (its exactlyOnceSupport() failed: no idea): its records and offsets are committed together, yet the connector may not resume exactly where it left off',
    ]);
  });
});

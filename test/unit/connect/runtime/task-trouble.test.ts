import { describe, expect, it } from 'vitest';
import type { ConnectorState, ConnectorTaskId } from '../../../../src/connect/herder/herder.ts';
import type { StatusListener } from '../../../../src/connect/runtime/status-listener.ts';
import { TaskTrouble } from '../../../../src/connect/runtime/task-trouble.ts';

const id: ConnectorTaskId = { connector: 'cdc', task: 0 };

/** A TaskTrouble over a listener that records every task state written, as `STATE[: trace]`. */
function setup() {
  const written: string[] = [];
  const status: StatusListener = {
    connectorState() {},
    taskState(taskId: ConnectorTaskId, state: ConnectorState, trace?: string) {
      written.push(
        `${taskId.connector}-${taskId.task} ${state}${trace === undefined ? '' : `: ${trace}`}`,
      );
    },
  };
  const trouble = new TaskTrouble(id, status);
  return { trouble, runner: trouble.listener, written };
}

describe('TaskTrouble', () => {
  it('publishes a detail as the trace of RUNNING, and RUNNING without trace once cleared', () => {
    const { trouble, runner, written } = setup();
    runner.taskState(id, 'RUNNING');

    trouble.report('waiting for X');
    trouble.report(null);

    expect(written).toEqual(['cdc-0 RUNNING', 'cdc-0 RUNNING: waiting for X', 'cdc-0 RUNNING']);
  });

  it('writes nothing when the task repeats its current detail, or clears what is not set', () => {
    const { trouble, runner, written } = setup();
    runner.taskState(id, 'RUNNING');

    trouble.report(null);
    trouble.report('waiting for X');
    trouble.report('waiting for X');
    trouble.report('waiting for Y');

    expect(written).toEqual([
      'cdc-0 RUNNING',
      'cdc-0 RUNNING: waiting for X',
      'cdc-0 RUNNING: waiting for Y',
    ]);
  });

  it('takes an empty detail for none', () => {
    const { trouble, runner, written } = setup();
    runner.taskState(id, 'RUNNING');

    trouble.report('');
    trouble.report('waiting for X');
    trouble.report('');

    expect(written).toEqual(['cdc-0 RUNNING', 'cdc-0 RUNNING: waiting for X', 'cdc-0 RUNNING']);
  });

  it('shows a detail reported during start with the RUNNING that follows start', () => {
    const { trouble, runner, written } = setup();

    trouble.report('waiting for X');
    runner.taskState(id, 'RUNNING');

    expect(written).toEqual(['cdc-0 RUNNING: waiting for X']);
  });

  it('keeps the detail of a paused task without showing it, and shows it again on resume', () => {
    const { trouble, runner, written } = setup();
    runner.taskState(id, 'RUNNING');
    trouble.report('waiting for X');

    runner.taskState(id, 'PAUSED');
    trouble.report('waiting for Y');
    runner.taskState(id, 'RUNNING');

    expect(written).toEqual([
      'cdc-0 RUNNING',
      'cdc-0 RUNNING: waiting for X',
      'cdc-0 PAUSED',
      'cdc-0 RUNNING: waiting for Y',
    ]);
  });

  it('ignores calls once the task failed or stopped, so its status stays FAILED or UNASSIGNED', () => {
    for (const end of ['FAILED', 'UNASSIGNED'] as const) {
      const { trouble, runner, written } = setup();
      runner.taskState(id, 'RUNNING');
      trouble.report('waiting for X');

      runner.taskState(id, end, end === 'FAILED' ? 'Error: boom' : undefined);
      trouble.report('waiting for Y');
      trouble.report(null);

      expect(written).toEqual([
        'cdc-0 RUNNING',
        'cdc-0 RUNNING: waiting for X',
        end === 'FAILED' ? 'cdc-0 FAILED: Error: boom' : 'cdc-0 UNASSIGNED',
      ]);
    }
  });

  it('passes every other listener call through unchanged', () => {
    const calls: string[] = [];
    const trouble = new TaskTrouble(id, {
      connectorState: (c, s, t) => calls.push(`connector ${c} ${s} ${t}`),
      taskState: (i, s, t) => calls.push(`task ${i.connector}-${i.task} ${s} ${t}`),
      topicUsed: (c, t) => calls.push(`topic ${c} ${t}`),
      connectorDeleted: (c) => calls.push(`deleted ${c}`),
    });
    trouble.report('waiting for X');

    trouble.listener.connectorState('cdc', 'FAILED', 'trace');
    trouble.listener.taskState({ connector: 'cdc', task: 1 }, 'RUNNING');
    trouble.listener.topicUsed?.('cdc', 'orders');
    trouble.listener.connectorDeleted?.('cdc');

    expect(calls).toEqual([
      'connector cdc FAILED trace',
      'task cdc-1 RUNNING undefined',
      'topic cdc orders',
      'deleted cdc',
    ]);
  });
});

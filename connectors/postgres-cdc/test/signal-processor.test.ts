/**
 * Signals by type, as Debezium's SignalProcessor and its actions handle them: what is
 * logged for log, unknown types and unreadable data, and what reaches the incremental
 * snapshot for the snapshot signals.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  type ExecuteSnapshotRequest,
  type SignalPosition,
  SignalProcessor,
  type SnapshotSignals,
} from '../src/signals/signal-processor.ts';

interface Logged {
  level: number;
  msg: string;
}

function setUp() {
  const logged: Logged[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logged.push(JSON.parse(line));
      done();
    },
  });
  const calls: string[] = [];
  const executed: ExecuteSnapshotRequest[] = [];
  const snapshot: SnapshotSignals = {
    execute: (r) => {
      executed.push(r);
    },
    stopSnapshot: (c) => {
      calls.push(`stop ${c.join(',')}`);
    },
    pause: () => {
      calls.push('pause');
    },
    resume: () => {
      calls.push('resume');
    },
    openWindow: (id) => {
      calls.push(`open ${id}`);
    },
    closeWindow: (id) => {
      calls.push(`close ${id}`);
      return [];
    },
  };
  const processor = new SignalProcessor(pino({ level: 'info' }, sink), snapshot);
  return { logged, calls, executed, processor };
}

const noSnapshot: SnapshotSignals = {
  execute: () => undefined,
  stopSnapshot: () => undefined,
  pause: () => undefined,
  resume: () => undefined,
  openWindow: () => undefined,
  closeWindow: () => [],
};

const AT: SignalPosition = {
  offset: { lsn: 1234, txId: 7 },
  lsn: 1234,
  txId: 7,
  commitTimeMicros: 0,
};

/** pino writes asynchronously to a plain stream: let it flush. */
const flushed = () => new Promise((r) => setImmediate(r));

describe('signals', () => {
  it('log writes data.message at INFO, with {} replaced by the offset of its place', async () => {
    const { logged, processor } = setUp();
    processor.process({ id: 'l-1', type: 'log', data: '{"message": "signal at {}"}' }, AT);
    await flushed();
    expect(logged).toEqual([
      expect.objectContaining({ level: 30, msg: 'signal at {"lsn":1234,"txId":7}' }),
    ]);
  });

  it('log without a message warns as Debezium does', async () => {
    const { logged, processor } = setUp();
    processor.process({ id: 'l-2', type: 'log', data: '{}' }, AT);
    await flushed();
    expect(logged.map((l) => [l.level, l.msg])).toEqual([
      [
        40,
        "Logging signal 'l-2' has arrived but the requested field 'message' is missing from data",
      ],
    ]);
  });

  it('an unknown type is logged with Debezium warning and does nothing else', async () => {
    const { logged, calls, executed, processor } = setUp();
    processor.process({ id: 'u-1', type: 'make-coffee', data: null }, AT);
    await flushed();
    expect(logged.map((l) => [l.level, l.msg])).toEqual([
      [40, "Signal 'u-1' has been received but the type 'make-coffee' is not recognized"],
    ]);
    expect([calls, executed]).toEqual([[], []]);
  });

  it('data that is not a JSON object is refused with a warning', async () => {
    const { logged, executed, processor } = setUp();
    processor.process({ id: 'x-1', type: 'execute-snapshot', data: '{not json' }, AT);
    await flushed();
    expect(logged.map((l) => l.level)).toEqual([40]);
    expect(logged[0].msg).toMatch(
      /^Signal 'x-1' has been received but the data .* cannot be parsed$/,
    );
    expect(executed).toEqual([]);
  });

  it('execute-snapshot hands data-collections and additional-conditions to the snapshot', () => {
    const { executed, processor } = setUp();
    processor.process(
      {
        id: 'x-2',
        type: 'execute-snapshot',
        data: JSON.stringify({
          'data-collections': ['public.a', 'public.b.*'],
          type: 'INCREMENTAL',
          'additional-conditions': [{ 'data-collection': 'public.a', filter: 'x > 1' }],
        }),
      },
      AT,
    );
    expect(executed).toEqual([
      {
        signalId: 'x-2',
        dataCollections: ['public.a', 'public.b.*'],
        additionalConditions: [{ dataCollection: 'public.a', filter: 'x > 1' }],
      },
    ]);
  });

  it('a blocking execute-snapshot goes to the blocking snapshot with its place in the stream', () => {
    const executed: ExecuteSnapshotRequest[] = [];
    const blocked: Array<[ExecuteSnapshotRequest, SignalPosition]> = [];
    const withBlocking = new SignalProcessor(
      pino({ level: 'silent' }),
      { ...noSnapshot, execute: (r) => executed.push(r) },
      { executeBlocking: (r, at) => blocked.push([r, at]) },
    );
    withBlocking.process(
      {
        id: 'b-1',
        type: 'execute-snapshot',
        data: '{"data-collections": ["public.a"], "type": "BLOCKING", "additional-conditions": [{"data-collection": "public.a", "filter": "SELECT * FROM public.a WHERE id > 2"}]}',
      },
      AT,
    );
    expect(executed).toEqual([]);
    expect(blocked).toEqual([
      [
        {
          signalId: 'b-1',
          dataCollections: ['public.a'],
          additionalConditions: [
            { dataCollection: 'public.a', filter: 'SELECT * FROM public.a WHERE id > 2' },
          ],
        },
        AT,
      ],
    ]);
  });

  it('a blocking execute-snapshot without a blocking snapshot is refused by name, and nothing runs', async () => {
    const { logged, executed, processor } = setUp();
    processor.process(
      {
        id: 'x-3',
        type: 'execute-snapshot',
        data: '{"data-collections": ["public.a"], "type": "blocking"}',
      },
      AT,
    );
    await flushed();
    expect(executed).toEqual([]);
    expect(logged.map((l) => [l.level, l.msg])).toEqual([
      [
        50,
        "not supported: execute-snapshot signal 'x-3' of type 'blocking'; only incremental snapshots run, nothing was done",
      ],
    ]);
  });

  it('stop, pause, resume and the watermarks reach the snapshot (watermark ids without their suffix)', () => {
    const { calls, processor } = setUp();
    processor.process(
      { id: 's', type: 'stop-snapshot', data: '{"data-collections":["public.a"]}' },
      AT,
    );
    processor.process({ id: 'p', type: 'pause-snapshot', data: null }, AT);
    processor.process({ id: 'r', type: 'resume-snapshot', data: '' }, AT);
    processor.process({ id: 'c1-open', type: 'snapshot-window-open', data: '{}' }, AT);
    processor.process({ id: 'c1-close', type: 'snapshot-window-close', data: '{}' }, AT);
    expect(calls).toEqual(['stop public.a', 'pause', 'resume', 'open c1', 'close c1']);
  });
});

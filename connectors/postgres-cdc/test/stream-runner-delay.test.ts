import { describe, expect, it } from 'vitest';
import { StreamRunner } from '../src/stream-runner.ts';
import { TableFilter } from '../src/table-filter.ts';

describe('streaming.delay.ms (no database)', () => {
  it('connects nothing before the delay is over, and stop() ends the wait', async () => {
    const states: string[] = [];
    const runner = new StreamRunner({
      connection: { host: '127.0.0.1', port: 1 },
      slotName: 's',
      publicationName: 'p',
      context: {
        serverName: 'srv',
        database: 'db',
        tombstonesOnDelete: true,
        provideTransactionMetadata: false,
        sourcePartition: { server: 'srv' },
        nowMs: () => 0,
      },
      filter: TableFilter.everything(),
      modes: { decimalHandlingMode: 'precise', timePrecisionMode: 'adaptive' },
      topicPrefix: 'srv',
      skippedOperations: new Set(),
      statusIntervalMs: 10_000,
      startLsn: 0,
      resumeAfter: null,
      backoff: { initialMs: 10, maxMs: 10 },
      slotRetry: { maxRetries: 0, delayMs: 10 },
      errorsMaxRetries: 0,
      startDelayMs: 600_000,
      inspectSlot: async () => null,
      emit: () => undefined,
      onCommit: () => undefined,
      canConfirmIdle: () => true,
      onState: (state) => states.push(state),
      onFatal: () => undefined,
    });

    runner.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(states).toEqual([]);
    await runner.stop();
    expect(states).toEqual(['stopped']);
  });
});

import { describe, expect, it } from 'vitest';
import type { AssignedWork } from '../../../src/connect/herder/assigned-work.ts';
import { RebalanceHandler } from '../../../src/connect/herder/rebalance-handler.ts';
import type { StatusReporter } from '../../../src/connect/herder/status-reporter.ts';
import type { AssignmentEvent } from '../../../src/connect/herder/worker-group-member.ts';
import { WorkerRebalanceMetrics } from '../../../src/connect/metrics/worker-metrics.ts';
import type { ConfigBackingStore } from '../../../src/connect/storage/config-backing-store.ts';
import type { StatusBackingStore } from '../../../src/connect/storage/status-backing-store.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { getLogger } from '../../../src/util/logger.ts';
import { systemTimers } from '../../../src/util/timers.ts';

const none = { connectors: [], tasks: [] };

function assignment(generation: number): AssignmentEvent {
  return {
    generation,
    memberId: 'm',
    leaderId: 'm',
    leaderUrl: 'http://w1:8083/',
    configOffset: 0,
    error: 0,
    protocol: 'sessioned',
    assigned: none,
    allocation: none,
    delay: 0,
  };
}

describe('connect-worker-rebalance-metrics from the rebalance handler', () => {
  it('time a rebalance from the join to the applied assignment and count it once applied', async () => {
    const clock = new ManualClock(0);
    const metrics = new WorkerRebalanceMetrics(clock);
    const handler = new RebalanceHandler({
      configs: {
        snapshot: () => ({ offset: 5 }),
        readToEnd: async () => {},
      } as unknown as ConfigBackingStore,
      status: {} as StatusBackingStore,
      work: { start: async () => {}, stop: async () => {} } as unknown as AssignedWork,
      reporter: { flush: async () => {} } as unknown as StatusReporter,
      run: (job) => job(),
      stopping: () => false,
      timers: systemTimers,
      logger: getLogger('test'),
      metrics,
    });
    handler.onJoinPrepare();
    expect(metrics.rebalancing).toBe(true);
    clock.advance(25);
    await handler.onAssigned(assignment(4));
    expect(metrics).toMatchObject({
      rebalancing: false,
      completedRebalances: 1,
      epoch: 4,
      protocol: 'sessioned',
    });
    expect(metrics.rebalanceTime.maxValue()).toBe(25);
    // An assignment with an error is no completed rebalance: the member rejoins.
    handler.onJoinPrepare();
    await handler.onAssigned({ ...assignment(5), error: 27 });
    expect(metrics).toMatchObject({ rebalancing: true, completedRebalances: 1 });
  });
});

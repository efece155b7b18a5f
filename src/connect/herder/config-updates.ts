/**
 * Config topic events -> herder work (Kafka Connect's DistributedHerder.ConfigUpdateListener).
 * The config store calls these synchronously from its read loop, on every worker, for
 * every record (its own writes included); each becomes a job on the herder's serial
 * loop, in log order, so it never races a rebalance callback or a REST request.
 *
 * A removed connector (a tombstone: it was deleted) is the one event that calls the
 * connector's `deleted(config)` hook, on the worker that ran it (assigned-work.ts);
 * a revocation, a target state or a restart never does.
 *
 * Besides updating what this worker runs (assigned-work.ts), the leader asks for a
 * rebalance whenever the configured work (connectors and committed task counts) no
 * longer matches what it last assigned: a new or deleted connector, or a connector
 * whose task count changed. That is how new work gets placed.
 */
import type { Logger } from '../../util/logger.ts';
import type { ConfigUpdateListener } from '../storage/config-backing-store.ts';
import type { AssignedWork } from './assigned-work.ts';
import type { ConnectorTaskId, RestartRequest } from './herder.ts';
import type { RebalanceHandler } from './rebalance-handler.ts';

export interface ConfigUpdatesOptions {
  work: AssignedWork;
  rebalance: RebalanceHandler;
  /** The member's view: leader or not, and how to ask for a rebalance. */
  isLeader: () => boolean;
  requestRejoin: () => void;
  enqueue: (what: string, job: () => Promise<void>) => void;
  stopping: () => boolean;
  logger: Logger;
  /** Applies a logger level on this worker. */
  setLoggerLevel?: (namespace: string, level: string) => void;
}

export function configUpdates(o: ConfigUpdatesOptions): ConfigUpdateListener {
  const after = (what: string, job: () => Promise<void>) =>
    o.enqueue(what, async () => {
      if (o.stopping()) return;
      await job();
      if (o.isLeader() && o.rebalance.needsRebalance()) {
        o.logger.info(`${what}: configured work changed; rebalancing`);
        o.requestRejoin();
      }
    });
  return {
    onLoggingLevelUpdate(namespace: string, level: string) {
      o.logger.info({ namespace, level }, 'cluster-scoped logger level applied');
      o.setLoggerLevel?.(namespace, level);
    },
    onConnectorConfigUpdate(connector: string) {
      after(`connector ${connector} config updated`, () =>
        o.work.onConnectorConfigUpdate(connector),
      );
    },
    onConnectorConfigRemove(connector: string) {
      after(`connector ${connector} removed`, () => o.work.onConnectorRemoved(connector));
    },
    onTaskConfigUpdate(tasks: ConnectorTaskId[]) {
      // A commit of zero tasks (a STOPPED connector) names no task: check every
      // connector we run tasks of as well.
      const named = tasks.map((t) => t.connector);
      after(
        `task configs of ${[...new Set(named)].join(', ') || 'a connector'} committed`,
        async () => {
          const running = o.work.running.tasks.map((t) => t.connector);
          for (const c of new Set([...named, ...running])) await o.work.onTaskConfigUpdate(c);
        },
      );
    },
    onConnectorTargetStateChange(connector: string) {
      after(`connector ${connector} target state changed`, () =>
        o.work.onTargetStateChange(connector),
      );
    },
    onRestartRequest(request: RestartRequest) {
      after(`restart of ${request.connector} requested`, () => o.work.onRestartRequest(request));
    },
  };
}

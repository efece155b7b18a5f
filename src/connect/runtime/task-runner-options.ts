/**
 * What the Worker hands every task runner (WorkerSourceTask, WorkerSinkTask): the task
 * and its configuration, the record pipeline (converters, transforms, tolerance
 * operator), where status goes, time, and the commit and shutdown intervals. Each
 * runner's options add what only its side needs (producer or consumer).
 */
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/logger.ts';
import type { Timers } from '../../util/timers.ts';
import type { TaskConfig } from '../api/connector.ts';
import type { RetryWithToleranceOperator } from '../errors/retry-with-tolerance-operator.ts';
import type { ConnectorTaskId, TargetState } from '../herder/herder.ts';
import type { RecordConverters } from './record-converters.ts';
import type { StatusListener } from './status-listener.ts';
import type { TransformationChain } from './transformation-chain.ts';

export interface TaskRunnerOptions<Task> {
  id: ConnectorTaskId;
  task: Task;
  taskClass: string;
  taskConfig: TaskConfig;
  targetState: TargetState;
  converters: RecordConverters;
  transforms: TransformationChain;
  operator: RetryWithToleranceOperator;
  status: StatusListener;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  offsetFlushIntervalMs: number;
  gracefulShutdownMs: number;
}

/**
 * Plugin entry: the BullMQ sink, topic records (above all Postgres change events) to
 * BullMQ jobs, exactly one job per record across crashes; and the BullMQ source, a
 * queue's completed and failed job events to a topic; and KeyOrderedWorker, the consumer
 * for ordering=key. See README.md.
 */
import { definePlugins } from '../../src/connect/api/index.ts';
import { BullMQSinkConnector } from './bullmq-sink-connector.ts';
import { BullMQSinkTask } from './bullmq-sink-task.ts';
import { BullMQSourceConnector } from './bullmq-source-connector.ts';
import { BullMQSourceTask } from './bullmq-source-task.ts';
import { bullmqSinkConfigDefs } from './config.ts';
import { bullmqSourceConfigDefs } from './source-config.ts';
import { BULLMQ_SINK_VERSION } from './version.ts';

/** The consumer of queues filled with ordering=key (README.md, "ordering=key"). */
export { KeyOrderedWorker } from './key-ordered-worker.ts';

export default definePlugins(
  {
    type: 'sink',
    className: 'connect.bullmq.BullMQSinkConnector',
    version: BULLMQ_SINK_VERSION,
    doc: 'Adds a BullMQ job per record (Debezium change events first), exactly once',
    configDefs: bullmqSinkConfigDefs,
    createConnector: () => new BullMQSinkConnector(),
    createTask: () => new BullMQSinkTask(),
  },
  {
    type: 'source',
    className: 'connect.bullmq.BullMQSourceConnector',
    version: BULLMQ_SINK_VERSION,
    doc: "Streams a BullMQ queue's completed and failed job events into a topic, keyed by job id",
    configDefs: bullmqSourceConfigDefs,
    createConnector: () => new BullMQSourceConnector(),
    createTask: () => new BullMQSourceTask(),
  },
);

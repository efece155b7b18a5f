/**
 * The BullMQ sink's own metrics, through the task's PluginMetrics (the runtime adds
 * the connector and task labels):
 *
 *   bullmq_sink_jobs_added_total    counter  jobs added (BullMQ's add-job script)
 *   bullmq_sink_jobs_removed_total  counter  jobs removed for deletes (key job ids)
 *
 * Counted per committed transaction (job-writer.ts), read when metrics are scraped.
 * A follow-up add of a key whose job was active counts with its transaction's adds.
 */
import type { PluginMetrics } from '../../src/connect/api/index.ts';
import type { JobWriter } from './job-writer.ts';

export function registerSinkMetrics(metrics: PluginMetrics, writer: JobWriter): void {
  metrics.counterOf(
    { name: 'bullmq_sink_jobs_added_total', help: 'Jobs added to BullMQ queues.' },
    () => writer.jobs.added,
  );
  metrics.counterOf(
    {
      name: 'bullmq_sink_jobs_removed_total',
      help: 'Jobs removed from BullMQ queues (deletes of records keyed by job id).',
    },
    () => writer.jobs.removed,
  );
}

/**
 * The Parquet sink's own metrics, registered through the task's PluginMetrics (the
 * runtime adds the connector and task labels and serves them on GET /metrics):
 *
 *   parquet_sink_files_written_total   counter  files made durable in the store
 *   parquet_sink_bytes_written_total   counter  their bytes (as encoded and uploaded)
 *   parquet_sink_open_partitions       gauge    topic partitions with a file group open
 *   parquet_sink_buffered_bytes        gauge    rows buffered plus files encoded and not
 *                                               yet durable (what buffer.memory.max.bytes caps)
 *
 * Confluent's S3 sink exposes no metrics of its own, so the names are ours. Every value
 * is read from the writer when metrics are scraped; the write path only bumps two
 * fields per durable file (topic-partition-writer.ts).
 */
import type { PluginMetrics } from '../../src/connect/api/index.ts';
import type { ParquetSinkWriter } from './sink-writer.ts';

export function registerSinkMetrics(
  metrics: PluginMetrics,
  writer: () => ParquetSinkWriter | undefined,
): void {
  metrics.counterOf(
    { name: 'parquet_sink_files_written_total', help: 'Parquet files made durable in the store.' },
    () => writer()?.written.files ?? 0,
  );
  metrics.counterOf(
    {
      name: 'parquet_sink_bytes_written_total',
      help: 'Bytes of the Parquet files made durable in the store.',
    },
    () => writer()?.written.bytes ?? 0,
  );
  metrics.gaugeOf(
    {
      name: 'parquet_sink_open_partitions',
      help: 'Topic partitions with a file group open (records buffered, file not closed).',
    },
    () => writer()?.openPartitions ?? 0,
  );
  metrics.gaugeOf(
    {
      name: 'parquet_sink_buffered_bytes',
      help: 'Bytes buffered: open rows (estimated) plus closed files not yet durable.',
    },
    () => writer()?.bufferedBytes ?? 0,
  );
}

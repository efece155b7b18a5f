/**
 * Plugin entry: the Parquet sink (local folder or S3), answering to Confluent's
 * S3 sink class name so existing connector configs run unchanged.
 */
import { definePlugins } from '../../src/connect/api/index.ts';
import { parquetSinkConfigDefs } from './config.ts';
import { ParquetSinkConnector } from './parquet-sink-connector.ts';
import { ParquetSinkTask } from './parquet-sink-task.ts';
import { PARQUET_SINK_VERSION } from './version.ts';

export default definePlugins({
  type: 'sink',
  className: 'connect.parquet.ParquetSinkConnector',
  aliases: ['io.confluent.connect.s3.S3SinkConnector'],
  version: PARQUET_SINK_VERSION,
  doc: 'Writes topics as Parquet files to a local folder or an S3 bucket, exactly once',
  configDefs: parquetSinkConfigDefs,
  createConnector: () => new ParquetSinkConnector(),
  createTask: () => new ParquetSinkTask(),
});

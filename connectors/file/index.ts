/**
 * The file plugin folder: FileStream source and sink, answering to Kafka's class names.
 * Lines in, lines out; used by users for quick pipelines and by the runtime's tests.
 */
import { definePlugins } from '../../src/connect/api/index.ts';
import { sinkConfigDefs, sourceConfigDefs } from './file-stream-config.ts';
import { FileStreamSinkConnector } from './file-stream-sink-connector.ts';
import { FileStreamSinkTask } from './file-stream-sink-task.ts';
import { FileStreamSourceConnector } from './file-stream-source-connector.ts';
import { FileStreamSourceTask } from './file-stream-source-task.ts';
import { FILE_CONNECTOR_VERSION } from './version.ts';

export default definePlugins(
  {
    type: 'source',
    className: 'connect.file.FileStreamSourceConnector',
    aliases: ['org.apache.kafka.connect.file.FileStreamSourceConnector'],
    version: FILE_CONNECTOR_VERSION,
    doc: 'Reads lines appended to a file',
    configDefs: sourceConfigDefs,
    createConnector: () => new FileStreamSourceConnector(),
    createTask: () => new FileStreamSourceTask(),
  },
  {
    type: 'sink',
    className: 'connect.file.FileStreamSinkConnector',
    aliases: ['org.apache.kafka.connect.file.FileStreamSinkConnector'],
    version: FILE_CONNECTOR_VERSION,
    doc: 'Appends record values to a file, one line each',
    configDefs: sinkConfigDefs,
    createConnector: () => new FileStreamSinkConnector(),
    createTask: () => new FileStreamSinkTask(),
  },
);

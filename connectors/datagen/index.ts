/**
 * The data generator plugin folder: a source of typed, keyed records at a set rate,
 * for demos and benchmarks.
 */
import { definePlugins } from '../../src/connect/api/index.ts';
import { datagenConfigDefs } from './datagen-config.ts';
import { DatagenConnector } from './datagen-connector.ts';
import { DatagenTask } from './datagen-task.ts';
import { DATAGEN_VERSION } from './version.ts';

export default definePlugins({
  type: 'source',
  className: 'connect.datagen.DatagenConnector',
  version: DATAGEN_VERSION,
  doc: 'Generates keyed, typed records at a configurable rate',
  configDefs: datagenConfigDefs,
  createConnector: () => new DatagenConnector(),
  createTask: () => new DatagenTask(),
});

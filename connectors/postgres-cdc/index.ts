/**
 * The postgres-cdc plugin folder: a Debezium-compatible Postgres change data capture
 * source, answering to Debezium's class name so existing connector configs run.
 *
 * Its topics (`<topic.prefix>.<schema>.<table>`) must be compacted so a delete's
 * tombstone removes the key; the runtime creates them before first use (see
 * TOPIC_CREATION_DEFAULTS). The topic of a table without a key is the exception: its
 * records have null keys, so the task asks for it to be created with
 * cleanup.policy=delete (src/keyless-tables.ts). With provide.transaction.metadata the
 * BEGIN and END events go to `<topic.prefix>.<topic.transaction>` (src/transaction-metadata.ts),
 * created with the same defaults: their keys are all distinct, so compaction keeps them.
 */
import { definePlugins } from '../../src/connect/api/index.ts';
import { postgresCdcConfigDefs } from './src/connector-config.ts';
import { CONNECTOR_VERSION } from './src/event-builder.ts';
import {
  CONNECTOR_ALIASES,
  CONNECTOR_CLASS,
  PostgresCdcSourceConnector,
} from './src/postgres-cdc-connector.ts';
import { PostgresCdcSourceTask } from './src/postgres-cdc-task.ts';

/**
 * Topic settings this connector's topics need, in KIP-158's `topic.creation.default.*`
 * form: compacted, so that a delete's tombstone removes the key.
 */
export const TOPIC_CREATION_DEFAULTS = {
  'topic.creation.default.cleanup.policy': 'compact',
  'topic.creation.default.partitions': '1',
  'topic.creation.default.replication.factor': '-1',
} as const;

export default definePlugins({
  type: 'source',
  className: CONNECTOR_CLASS,
  aliases: [...CONNECTOR_ALIASES],
  version: CONNECTOR_VERSION,
  doc: 'Streams row changes of Postgres tables (pgoutput) as Debezium change events',
  configDefs: postgresCdcConfigDefs,
  topicCreationDefaults: TOPIC_CREATION_DEFAULTS,
  createConnector: () => new PostgresCdcSourceConnector(),
  createTask: () => new PostgresCdcSourceTask(),
});

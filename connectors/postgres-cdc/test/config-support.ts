/**
 * Common ground of the connector config tests: a small config the connector accepts,
 * and the two judges of a key besides the parser — the connector's validate(), and
 * the runtime's validation as /config/validate runs it (the plugin loaded as a
 * worker loads it).
 */
import { type ConnectorConfig, loadManifests } from '../../../src/connect/api/index.ts';
import {
  configErrorMessages,
  validateConnectorConfig,
  validationContext,
} from '../../../src/connect/runtime/config-validation.ts';
import { PluginRegistry } from '../../../src/connect/runtime/plugins.ts';
import plugin from '../index.ts';
import { PostgresCdcSourceConnector } from '../src/postgres-cdc-connector.ts';

/** Every key the tests add to stands beside these; on their own they are valid. */
export const baseConfig: ConnectorConfig = {
  name: 'inventory',
  'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
  'database.hostname': 'db.example',
  'database.user': 'u',
  'database.dbname': 'inventory',
  'topic.prefix': 'one',
};

/** The connector's validate() errors for parsed values, as the runtime calls it. */
export function connectorErrors(values: Parameters<PostgresCdcSourceConnector['validate']>[0]) {
  return new PostgresCdcSourceConnector().validate(values, {
    connectorName: 'inventory',
    otherConnectors: [],
  });
}

/** The error messages /config/validate gives for `config`. */
export function runtimeValidationMessages(config: ConnectorConfig): string[] {
  const plugins = new PluginRegistry();
  plugins.add(loadManifests({ default: plugin }, 'connectors/postgres-cdc'), 'builtin');
  return configErrorMessages(validateConnectorConfig(plugins, config, validationContext(null, [])));
}

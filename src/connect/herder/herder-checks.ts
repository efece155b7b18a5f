/**
 * Checks both herders make before acting, with Kafka Connect's messages: a connector
 * config must validate, and offsets may change only while a connector is STOPPED.
 */
import type { ValidationContext } from '../api/connector.ts';
import { configErrorMessages, validateConnectorConfig } from '../runtime/config-validation.ts';
import type { PluginRegistry } from '../runtime/plugins.ts';
import { type ConnectorConfigMap, HerderError } from './herder.ts';

const INVALID_CONFIG_HINT =
  'You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`';

/**
 * Throws HerderError 'invalid-config' with the per-field results when the config is
 * invalid. `context` comes from the config state the write is decided on
 * (validationContext), so a conflict with another connector is caught there.
 */
export function requireValidConfig(
  plugins: PluginRegistry,
  config: ConnectorConfigMap,
  context: ValidationContext,
): void {
  const infos = validateConnectorConfig(plugins, config, context);
  if (infos.error_count === 0) return;
  const errors = configErrorMessages(infos);
  throw new HerderError(
    'invalid-config',
    [
      `Connector configuration is invalid and contains the following ${errors.length} error(s):`,
      ...errors,
      INVALID_CONFIG_HINT,
    ].join('\n'),
    { configInfos: infos },
  );
}

/** The error for offset changes while a connector is not STOPPED. */
export function connectorNotStopped(name: string): HerderError {
  return new HerderError(
    'bad-request',
    `Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/${name}/stop' endpoint`,
  );
}

/**
 * Checks both herders make before acting, with Kafka Connect's messages: a connector
 * config must validate, and offsets may change only while a connector is STOPPED.
 */
import type { ValidationContext } from '../api/connector.ts';
import type { ConfigProviders } from '../runtime/config-providers.ts';
import {
  type ConfigInfos,
  configErrorMessages,
  validateConnectorConfig,
  type WorkerValidation,
} from '../runtime/config-validation.ts';
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
  providers: ConfigProviders,
  plugins: PluginRegistry,
  config: ConnectorConfigMap,
  context: ValidationContext,
  worker?: WorkerValidation,
): void {
  const infos = validateWithReferences(providers, plugins, config, context, worker);
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

/**
 * validateConnectorConfig on the config as the connector will see it, its references
 * (`${file:...:key}`) resolved, as Kafka validates; the answer shows the values as
 * written, so no resolved secret leaves the worker, and a reference that cannot be
 * resolved is an error of its key. The other connectors' configs are resolved too
 * where they can be, so a plugin compares like with like (a slot on the same host).
 */
export function validateWithReferences(
  providers: ConfigProviders,
  plugins: PluginRegistry,
  config: ConnectorConfigMap,
  context: ValidationContext,
  worker?: WorkerValidation,
): ConfigInfos {
  const { config: resolved, errors } = providers.tryResolve(config);
  const others = context.otherConnectors.map((o) => ({
    name: o.name,
    config: providers.tryResolve(o.config).config as Record<string, string>,
  }));
  const infos = validateConnectorConfig(
    plugins,
    resolved,
    { ...context, otherConnectors: others },
    worker,
  );
  for (const entry of infos.configs) {
    const value = entry.value;
    if (value === null || !Object.hasOwn(config, value.name)) continue;
    if (resolved[value.name] !== config[value.name]) value.value = config[value.name];
  }
  for (const error of errors) {
    const entry = infos.configs.find((c) => c.value?.name === error.key)?.value;
    if (entry) entry.errors.push(error.message);
    else
      infos.configs.push({
        definition: null,
        value: {
          name: error.key,
          value: config[error.key],
          recommended_values: [],
          errors: [error.message],
          visible: true,
        },
      });
    infos.error_count += 1;
  }
  return infos;
}

/** The error for offset changes while a connector is not STOPPED. */
export function connectorNotStopped(name: string): HerderError {
  return new HerderError(
    'bad-request',
    `Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/${name}/stop' endpoint`,
  );
}

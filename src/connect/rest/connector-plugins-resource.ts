/**
 * /connector-plugins, with Kafka Connect's ConnectorPluginsResource answers:
 *   GET /connector-plugins                       200 [{class, type, version}], connectors
 *                                                only unless ?connectorsOnly=false
 *   GET /connector-plugins/{plugin}/config       200 [ConfigKeyInfo]; 404 "Unknown plugin X."
 *   PUT /connector-plugins/{plugin}/config/validate
 *                                                200 ConfigInfos; 400 when the body's
 *                                                connector.class is another plugin's
 * The plugin in the path may be a class name, an alias or a short name.
 */
import type { FastifyInstance } from 'fastify';
import { pluginConfigKeyInfos } from '../runtime/config-validation.ts';
import { connectorConfigSchema, type RestContext } from './rest-context.ts';
import { RestError } from './rest-errors.ts';

interface PluginParams {
  plugin: string;
}

const pluginParams = {
  type: 'object',
  properties: { plugin: { type: 'string' } },
  required: ['plugin'],
} as const;

const CONNECTOR_SUFFIX = 'Connector';

export function registerConnectorPluginsResource(app: FastifyInstance, ctx: RestContext): void {
  const { plugins, herder } = ctx;

  app.get(
    '/connector-plugins',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: { connectorsOnly: { type: 'boolean', default: true } },
        },
      },
    },
    async (request) => {
      const { connectorsOnly } = request.query as { connectorsOnly: boolean };
      return plugins.list(connectorsOnly);
    },
  );

  app.get(
    '/connector-plugins/:plugin/config',
    { schema: { params: pluginParams } },
    async (request) => {
      const { plugin } = request.params as PluginParams;
      const desc = plugins.find(plugin);
      if (desc === undefined) throw new RestError(404, `Unknown plugin ${plugin}.`);
      return pluginConfigKeyInfos(plugins, desc.manifest.type, desc.manifest.configDefs);
    },
  );

  app.put(
    '/connector-plugins/:plugin/config/validate',
    { schema: { params: pluginParams, body: connectorConfigSchema } },
    async (request) => {
      const { plugin } = request.params as PluginParams;
      const config = request.body as Record<string, string>;
      const included = config['connector.class'];
      if (typeof included === 'string' && !normalized(included).endsWith(normalized(plugin))) {
        throw new RestError(
          400,
          `Included connector type ${included} does not match request type ${plugin}`,
        );
      }
      return herder.validateConnectorConfig(config);
    },
  );
}

/** Connect's check works for full and short names alike: drop a trailing "Connector". */
function normalized(name: string): string {
  return name.endsWith(CONNECTOR_SUFFIX) && name.length > CONNECTOR_SUFFIX.length
    ? name.slice(0, -CONNECTOR_SUFFIX.length)
    : name;
}

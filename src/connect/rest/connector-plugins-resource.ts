/**
 * /connector-plugins, with Kafka Connect's ConnectorPluginsResource answers:
 *   GET /connector-plugins                       200 [{class, type, version}], connectors
 *                                                only unless ?connectorsOnly=false (then
 *                                                also transformations, predicates,
 *                                                converters and header converters)
 *   GET /connector-plugins/{plugin}/config       200 [ConfigKeyInfo]; 404 "Unknown plugin X."
 *   PUT /connector-plugins/{plugin}/config/validate
 *                                                200 ConfigInfos; 400 when the body's
 *                                                connector.class is another plugin's
 * The plugin in the path may be a class name, an alias or a short name.
 */
import type { FastifyInstance } from 'fastify';
import { pluginConfigKeyInfos } from '../runtime/config-validation.ts';
import { SIMPLE_HEADER_CONVERTER } from '../runtime/header-converter.ts';
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
      const listed: Array<{ class: string; type: string; version: string }> =
        plugins.list(connectorsOnly);
      if (!connectorsOnly) listed.push(...headerConverters(ctx));
      return listed;
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

/**
 * Kafka Connect lists header converters last, as type `header_converter`: its
 * SimpleHeaderConverter, and every converter that also implements HeaderConverter
 * (JsonConverter, StringConverter, ...). Here SimpleHeaderConverter is built into the
 * runtime and any converter plugin may be a `header.converter`, so all of them are
 * listed, sorted by class name as Kafka's sorted sets are.
 */
function headerConverters(
  ctx: RestContext,
): Array<{ class: string; type: string; version: string }> {
  const converters = ctx.plugins
    .list(false)
    .filter((p) => p.type === 'converter')
    .map((p) => ({ class: p.class, type: 'header_converter', version: p.version }));
  converters.push({
    class: SIMPLE_HEADER_CONVERTER,
    type: 'header_converter',
    version: ctx.serverInfo.version,
  });
  return converters.sort((a, b) => (a.class < b.class ? -1 : a.class > b.class ? 1 : 0));
}

/** Connect's check works for full and short names alike: drop a trailing "Connector". */
function normalized(name: string): string {
  return name.endsWith(CONNECTOR_SUFFIX) && name.length > CONNECTOR_SUFFIX.length
    ? name.slice(0, -CONNECTOR_SUFFIX.length)
    : name;
}

/**
 * /connectors and /connectors/{name}[/config]: listing, creating, reading, replacing,
 * patching and deleting connectors, with Kafka Connect's ConnectorsResource answers:
 *   GET    /connectors                    200 [names]; ?expand=status|info (repeatable)
 *                                          gives {name: {status?, info?}}
 *   POST   /connectors                    201 ConnectorInfo + absolute Location; 409 if it exists
 *   GET    /connectors/{name}             200 ConnectorInfo
 *   DELETE /connectors/{name}             204
 *   GET    /connectors/{name}/config      200 {key: value}
 *   PUT    /connectors/{name}/config      201 (created, + Location) or 200 ConnectorInfo
 *   PATCH  /connectors/{name}/config      200 ConnectorInfo; a null value removes the key
 * A `name` in the body that differs from the URL's is a 400 before the herder is asked.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConnectorConfigMap, TargetState } from '../herder/herder.ts';
import { isHerderError } from '../herder/herder.ts';
import {
  absoluteUrl,
  connectorConfigSchema,
  connectorParams,
  type RestContext,
} from './rest-context.ts';
import { RestError } from './rest-errors.ts';

interface NameParams {
  name: string;
}

export function registerConnectorsResource(app: FastifyInstance, ctx: RestContext): void {
  const { herder } = ctx;

  app.get(
    '/connectors',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: { expand: { type: 'array', items: { type: 'string' } } },
        },
      },
    },
    async (request) => {
      const { expand } = request.query as { expand?: string[] };
      const names = await herder.connectors();
      if (expand === undefined) return names;
      const out: Record<string, Record<string, unknown>> = {};
      for (const name of names) {
        try {
          const expansions: Record<string, unknown> = {};
          for (const e of expand) {
            if (e === 'status') expansions.status = await herder.connectorStatus(name);
            else if (e === 'info') expansions.info = await herder.connectorInfo(name);
          }
          out[name] = expansions;
        } catch (error) {
          // Deleted while we looked it up: leave it out, as Kafka Connect does.
          if (isHerderError(error) && error.kind === 'not-found') continue;
          throw error;
        }
      }
      return out;
    },
  );

  app.post(
    '/connectors',
    {
      schema: {
        body: {
          type: 'object',
          properties: {
            name: { type: ['string', 'null'] },
            config: connectorConfigSchema,
            initial_state: { type: ['string', 'null'] },
          },
          required: ['config'],
        },
      },
    },
    async (request, reply) => {
      const body = request.body as {
        name?: string | null;
        config: Record<string, string | null>;
        initial_state?: string | null;
      };
      // Connect trims the name and lets validation report an empty one.
      const name = (body.name ?? '').trim();
      const config = withName(name, body.config);
      const initialState = initialStateOf(body.initial_state);
      const { result } = await herder.putConnectorConfig(name, config, false, initialState);
      return reply.code(201).header('location', connectorLocation(request, name)).send(result);
    },
  );

  app.get('/connectors/:name', { schema: { params: connectorParams } }, async (request) => {
    return herder.connectorInfo((request.params as NameParams).name);
  });

  app.delete(
    '/connectors/:name',
    { schema: { params: connectorParams } },
    async (request, reply) => {
      await herder.deleteConnector((request.params as NameParams).name);
      return reply.code(204).send();
    },
  );

  app.get('/connectors/:name/config', { schema: { params: connectorParams } }, async (request) => {
    return herder.connectorConfig((request.params as NameParams).name);
  });

  app.put(
    '/connectors/:name/config',
    { schema: { params: connectorParams, body: connectorConfigSchema } },
    async (request, reply) => {
      const { name } = request.params as NameParams;
      const config = withName(name, request.body as Record<string, string | null>);
      const { created, result } = await herder.putConnectorConfig(name, config, true);
      if (created) reply.code(201).header('location', connectorLocation(request, name));
      return reply.send(result);
    },
  );

  app.patch(
    '/connectors/:name/config',
    { schema: { params: connectorParams, body: connectorConfigSchema } },
    async (request) => {
      const { name } = request.params as NameParams;
      const patch = request.body as Record<string, string | null>;
      // Kafka's PATCH has no such check: it would store a config named `other` under
      // this connector (200). Refused as PUT refuses it, the same 400 and text.
      if (typeof patch.name === 'string' && patch.name !== name)
        throw nameMismatch(patch.name, name);
      const { result } = await herder.patchConnectorConfig(name, patch);
      return result;
    },
  );
}

/**
 * ConnectorsResource.checkAndPutConnectorConfigName: the body's name must equal the
 * URL's; absent, the URL's is added. Null values stay for validation to report.
 */
function withName(name: string, config: Record<string, string | null>): ConnectorConfigMap {
  const included = config.name;
  if (typeof included === 'string' && included !== name) throw nameMismatch(included, name);
  return { ...config, name } as ConnectorConfigMap;
}

const INITIAL_STATES: readonly TargetState[] = ['RUNNING', 'PAUSED', 'STOPPED'];

/**
 * CreateConnectorRequest.InitialState.forValue: any case of RUNNING, PAUSED or STOPPED.
 * Another value fails Jackson's enum creator in Kafka, a 500 nothing maps; here it is
 * the client's 400 naming the values allowed.
 */
function initialStateOf(value: string | null | undefined): TargetState | undefined {
  if (value === undefined || value === null) return undefined;
  const state = value.toUpperCase() as TargetState;
  if (!INITIAL_STATES.includes(state))
    throw new RestError(
      400,
      `Invalid initial_state ${value}: must be one of ${INITIAL_STATES.join(', ')} (in any case)`,
    );
  return state;
}

function nameMismatch(included: string, name: string): RestError {
  return new RestError(
    400,
    `Connector name configuration (${included}) doesn't match connector name in the URL (${name})`,
  );
}

/** Location of a created connector: absolute, as JAX-RS makes it (rest-context.ts). */
function connectorLocation(request: FastifyRequest, name: string): string {
  return absoluteUrl(request, `/connectors/${encodeURIComponent(name)}`);
}

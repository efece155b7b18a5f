/**
 * /connectors/{name}/offsets (KIP-875) and /connectors/{name}/topics (KIP-558), with
 * Kafka Connect's answers:
 *   GET    /connectors/{name}/offsets       200 {"offsets": [{partition, offset}]}
 *   PATCH  /connectors/{name}/offsets       200 {"message": ...}; 400 when no offsets are
 *                                           given; the herder refuses unless STOPPED
 *   DELETE /connectors/{name}/offsets       200 {"message": ...}
 *   GET    /connectors/{name}/topics        200 {"<name>": {"topics": [...]}}; 403 when
 *                                           topic tracking is disabled
 *   PUT    /connectors/{name}/topics/reset  202; 403 when tracking or reset is disabled
 * Source offsets are the connector's own maps; sink offsets are
 * {partition: {kafka_topic, kafka_partition}, offset: {kafka_offset}}: the herder knows
 * which the connector is and checks the shape.
 */
import type { FastifyInstance } from 'fastify';
import type { ConnectorOffset } from '../herder/herder.ts';
import { connectorParams, type RestContext } from './rest-context.ts';
import { RestError, restMessages } from './rest-errors.ts';

interface NameParams {
  name: string;
}

const offsetsBody = {
  type: 'object',
  properties: {
    offsets: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        properties: {
          partition: { type: 'object' },
          offset: { type: ['object', 'null'] },
        },
        required: ['partition'],
      },
    },
  },
} as const;

export function registerConnectorOffsetsResource(app: FastifyInstance, ctx: RestContext): void {
  const { herder, topicTracking } = ctx;

  app.get('/connectors/:name/offsets', { schema: { params: connectorParams } }, async (request) => {
    return herder.connectorOffsets((request.params as NameParams).name);
  });

  app.patch(
    '/connectors/:name/offsets',
    { schema: { params: connectorParams, body: offsetsBody } },
    async (request) => {
      const { offsets } = (request.body ?? {}) as { offsets?: ConnectorOffset[] | null };
      if (offsets === undefined || offsets === null || offsets.length === 0) {
        throw new RestError(
          400,
          'Partitions / offsets need to be provided for an alter offsets request',
        );
      }
      const normalized = offsets.map((o) => ({ partition: o.partition, offset: o.offset ?? null }));
      return herder.alterConnectorOffsets((request.params as NameParams).name, normalized);
    },
  );

  app.delete(
    '/connectors/:name/offsets',
    { schema: { params: connectorParams } },
    async (request) => {
      return herder.resetConnectorOffsets((request.params as NameParams).name);
    },
  );

  app.get('/connectors/:name/topics', { schema: { params: connectorParams } }, async (request) => {
    if (!topicTracking.enabled) throw new RestError(403, restMessages.topicTrackingDisabled);
    const { name } = request.params as NameParams;
    const info = await herder.connectorActiveTopics(name);
    return { [name]: info };
  });

  app.put(
    '/connectors/:name/topics/reset',
    { schema: { params: connectorParams } },
    async (request, reply) => {
      if (!topicTracking.enabled) throw new RestError(403, restMessages.topicTrackingDisabled);
      if (!topicTracking.allowReset)
        throw new RestError(403, restMessages.topicTrackingResetDisabled);
      await herder.resetConnectorActiveTopics((request.params as NameParams).name);
      return reply.code(202).send();
    },
  );
}

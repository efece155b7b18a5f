/**
 * Connector and task state: status, restarts, target state changes and task listings,
 * with Kafka Connect's answers:
 *   GET  /connectors/{name}/status                  200 ConnectorStateInfo, plus
 *                                                   `external` where the plugin reports
 *                                                   state it keeps outside Kafka
 *                                                   (runtime/external-state.ts)
 *   POST /connectors/{name}/restart                 204 (connector only, the default)
 *        ?includeTasks=true and/or ?onlyFailed=true 202 ConnectorStateInfo as planned
 *   PUT  /connectors/{name}/pause|resume            202, no body
 *   PUT  /connectors/{name}/stop                    204, no body (Connect's resource
 *                                                   returns void here, unlike pause)
 *   PUT  /connectors/{name}/fence                   204: zombie fencing of an exactly-
 *                                                   once source (internal: workers
 *                                                   forward it to the leader)
 *   GET  /connectors/{name}/tasks                   200 [TaskInfo]
 *   GET  /connectors/{name}/tasks-config            200 {"<name>-<task>": config}: Kafka's
 *                                                   deprecated form of /tasks (KIP-970),
 *                                                   kept while clients still call it
 *   GET  /connectors/{name}/tasks/{task}/status     200 TaskState
 *   POST /connectors/{name}/tasks/{task}/restart    204
 * A task id that is not a whole number is an unknown resource (404), as JAX-RS answers.
 */
import type { FastifyInstance } from 'fastify';
import { ExternalStateReader } from '../runtime/external-state.ts';
import { connectorParams, type RestContext } from './rest-context.ts';
import { RestError, restMessages } from './rest-errors.ts';

/** A reading may open a database connection: at most 5 s, shared for 2 s. */
const EXTERNAL_STATE_OPTIONS = { timeoutMs: 5_000, cacheMs: 2_000 };

interface NameParams {
  name: string;
}

interface TaskParams extends NameParams {
  task: string;
}

const taskParams = {
  type: 'object',
  properties: { name: { type: 'string' }, task: { type: 'string' } },
  required: ['name', 'task'],
} as const;

export function registerConnectorStateResource(app: FastifyInstance, ctx: RestContext): void {
  const { herder } = ctx;

  const external = new ExternalStateReader(ctx.plugins, {
    ...EXTERNAL_STATE_OPTIONS,
    resolve: (config) => herder.configProviders().resolve(config),
  });
  app.get('/connectors/:name/status', { schema: { params: connectorParams } }, async (request) => {
    const { name } = request.params as NameParams;
    const status = await herder.connectorStatus(name);
    const state = await external.read(name, await herder.connectorConfig(name));
    return state === undefined ? status : { ...status, external: state };
  });

  app.post(
    '/connectors/:name/restart',
    {
      schema: {
        params: connectorParams,
        querystring: {
          type: 'object',
          properties: {
            includeTasks: { type: 'boolean', default: false },
            onlyFailed: { type: 'boolean', default: false },
          },
        },
      },
    },
    async (request, reply) => {
      const { name } = request.params as NameParams;
      const { includeTasks, onlyFailed } = request.query as {
        includeTasks: boolean;
        onlyFailed: boolean;
      };
      if (!includeTasks && !onlyFailed) {
        // Kept for compatibility with clients of the original endpoint: no body.
        await herder.restartConnector(name);
        return reply.code(204).send();
      }
      const status = await herder.restartConnectorAndTasks({
        connector: name,
        includeTasks,
        onlyFailed,
      });
      return reply.code(202).send(status);
    },
  );

  app.put(
    '/connectors/:name/pause',
    { schema: { params: connectorParams } },
    async (request, reply) => {
      await herder.pauseConnector((request.params as NameParams).name);
      return reply.code(202).send();
    },
  );

  app.put(
    '/connectors/:name/resume',
    { schema: { params: connectorParams } },
    async (request, reply) => {
      await herder.resumeConnector((request.params as NameParams).name);
      return reply.code(202).send();
    },
  );

  app.put(
    '/connectors/:name/stop',
    { schema: { params: connectorParams } },
    async (request, reply) => {
      await herder.stopConnector((request.params as NameParams).name);
      return reply.code(204).send();
    },
  );

  app.put(
    '/connectors/:name/fence',
    { schema: { params: connectorParams } },
    async (request, reply) => {
      await herder.fenceZombies((request.params as NameParams).name);
      return reply.code(204).send();
    },
  );

  app.get('/connectors/:name/tasks', { schema: { params: connectorParams } }, async (request) => {
    return herder.taskConfigs((request.params as NameParams).name);
  });

  app.get(
    '/connectors/:name/tasks-config',
    { schema: { params: connectorParams } },
    async (request) => {
      const tasks = await herder.taskConfigs((request.params as NameParams).name);
      // Jackson writes a ConnectorTaskId map key with its toString(): "<connector>-<task>".
      return Object.fromEntries(tasks.map((t) => [`${t.id.connector}-${t.id.task}`, t.config]));
    },
  );

  app.get(
    '/connectors/:name/tasks/:task/status',
    { schema: { params: taskParams } },
    async (request) => {
      const { name, task } = request.params as TaskParams;
      return herder.taskStatus(name, taskId(task));
    },
  );

  app.post(
    '/connectors/:name/tasks/:task/restart',
    { schema: { params: taskParams } },
    async (request, reply) => {
      const { name, task } = request.params as TaskParams;
      await herder.restartTask(name, taskId(task));
      return reply.code(204).send();
    },
  );
}

function taskId(text: string): number {
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new RestError(404, restMessages.notFound);
  }
  return Number(text);
}

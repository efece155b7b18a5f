/**
 * REST conformance: one table of requests, good and bad, walked against a real
 * standalone worker and a real distributed worker (one member), each in process
 * against a test broker, comparing status codes and bodies with what Kafka Connect
 * answers. Each row names where Kafka's answer comes from (its resource classes and
 * its herders, read from Kafka's source), so a row that fails says which of the two
 * drifted. Where Kafka's standalone and distributed herders word an answer
 * differently, the row gives both. Rows marked `differs` are answers we give on
 * purpose where Kafka's is an accident (an exception nothing maps, hence a 500): the
 * reason is in the row and in the code that answers it.
 *
 * Rows run in order against one worker per mode: the rows that change state (create,
 * restart, pause, stop, delete, offsets) come after the reads and use connectors of
 * their own, so earlier rows see the fixture as it was set up.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.ts';
import {
  distributedWorkerDefs,
  workerPassthroughPrefixes,
} from '../../../src/config/worker-config.ts';
import { startDistributedWorker } from '../../../src/connect/herder/distributed-worker.ts';
import { offsetsMessages } from '../../../src/connect/herder/herder.ts';
import { startStandaloneWorker } from '../../../src/connect/runtime/standalone-worker.ts';
import { startTestBroker, type TestBroker } from '../../helpers/broker.ts';
import { rest, restText } from '../../helpers/rest-client.ts';
import { createTmpDir } from '../../helpers/tmp-dir.ts';
import { waitFor } from '../../helpers/wait.ts';
import { testPluginPath, workerConfig } from '../standalone/standalone-helpers.ts';

type Mode = 'standalone' | 'distributed';

/** An answer that Kafka's two herders give differently. */
type PerMode<T> = T | { standalone: T; distributed: T };

interface Case {
  /** The request and what it is about. */
  title: string;
  method: string;
  path: string;
  body?: unknown;
  /** A body sent as is (not JSON-encoded), for bodies that are not valid JSON. */
  raw?: string;
  status: number;
  /** An error answer: the body must be exactly {error_code: status, message}. */
  message?: PerMode<string | RegExp>;
  /** A successful answer: its body's shape. */
  shape?: (body: unknown) => void;
  /** Where Kafka's answer comes from. */
  kafka: string;
  /** Why we answer otherwise than Kafka, on purpose. */
  differs?: string;
}

const dir = createTmpDir('rest-conformance-');
const inFile = join(dir.path, 'in.txt');
const outFile = join(dir.path, 'out.txt');
const TOPIC = 'conformance-lines';

const source = (extra: Record<string, string> = {}) => ({
  'connector.class': 'FileStreamSource',
  'tasks.max': '1',
  file: inFile,
  topic: TOPIC,
  ...extra,
});
const sink = {
  'connector.class': 'FileStreamSink',
  'tasks.max': '1',
  file: outFile,
  topics: TOPIC,
};

const SOURCE_CLASS = 'connect.file.FileStreamSourceConnector';
const NOT_STOPPED = (name: string) =>
  `Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/${name}/stop' endpoint`;

const connectorState = {
  state: expect.any(String),
  worker_id: expect.any(String),
};
const stateInfo = (name: string, type: string) => ({
  name,
  connector: expect.objectContaining(connectorState),
  tasks: expect.arrayContaining([expect.objectContaining({ id: 0, ...connectorState })]),
  type,
});
const connectorInfo = (name: string, type: string, tasks: number) => ({
  name,
  config: expect.objectContaining({ name }),
  tasks: Array.from({ length: tasks }, (_, task) => ({ connector: name, task })),
  type,
});
const shapeOf = (expected: unknown) => (body: unknown) => expect(body).toEqual(expected);

const cases: Case[] = [
  // ---- root, unknown paths and methods ------------------------------------------------
  {
    title: 'GET / tells the version, commit and Kafka cluster id',
    method: 'GET',
    path: '/',
    status: 200,
    shape: (body) =>
      expect(body).toMatchObject({
        version: expect.any(String),
        commit: expect.any(String),
        kafka_cluster_id: expect.any(String),
      }),
    kafka: 'RootResource.serverInfo',
  },
  {
    title: 'GET /health once the worker has started',
    method: 'GET',
    path: '/health',
    status: 200,
    shape: shapeOf({
      status: 'healthy',
      message: 'Worker has completed startup and is ready to handle requests.',
    }),
    kafka: 'RootResource.healthCheck, WorkerStatus.healthy',
  },
  {
    title: 'an unknown path is Jersey 404',
    method: 'GET',
    path: '/no-such-resource',
    status: 404,
    message: 'HTTP 404 Not Found',
    kafka: 'Jersey NotFoundException via ConnectExceptionMapper',
  },
  {
    title: 'a known path with another method is Jersey 405',
    method: 'DELETE',
    path: '/connectors',
    status: 405,
    message: 'HTTP 405 Method Not Allowed',
    kafka: 'Jersey NotAllowedException via ConnectExceptionMapper',
  },

  // ---- listing ---------------------------------------------------------------------------
  {
    title: 'GET /connectors lists the names',
    method: 'GET',
    path: '/connectors',
    status: 200,
    shape: (body) =>
      expect([...(body as string[])].sort()).toEqual(['doomed', 'halted', 'snk', 'src']),
    kafka: 'ConnectorsResource.listConnectors',
  },
  {
    title: 'GET /connectors?expand=status gives each status',
    method: 'GET',
    path: '/connectors?expand=status',
    status: 200,
    shape: (body) =>
      expect(body).toMatchObject({
        src: { status: stateInfo('src', 'source') },
        snk: { status: stateInfo('snk', 'sink') },
      }),
    kafka: 'ConnectorsResource.listConnectors',
  },
  {
    title: 'GET /connectors?expand=info gives each ConnectorInfo',
    method: 'GET',
    path: '/connectors?expand=info',
    status: 200,
    shape: (body) =>
      expect((body as Record<string, unknown>).src).toEqual({
        info: connectorInfo('src', 'source', 1),
      }),
    kafka: 'ConnectorsResource.listConnectors',
  },
  {
    title: 'GET /connectors?expand=status&expand=info gives both',
    method: 'GET',
    path: '/connectors?expand=status&expand=info',
    status: 200,
    shape: (body) =>
      expect((body as Record<string, unknown>).src).toEqual({
        status: stateInfo('src', 'source'),
        info: connectorInfo('src', 'source', 1),
      }),
    kafka: 'ConnectorsResource.listConnectors',
  },
  {
    title: 'GET /connectors?expand=bogus ignores the unknown expansion',
    method: 'GET',
    path: '/connectors?expand=bogus',
    status: 200,
    shape: (body) => expect((body as Record<string, unknown>).src).toEqual({}),
    kafka: 'ConnectorsResource.listConnectors ("Ignoring unknown expansion type")',
  },

  // ---- one connector: reads ---------------------------------------------------------------
  {
    title: 'GET /connectors/{name} is its ConnectorInfo',
    method: 'GET',
    path: '/connectors/src',
    status: 200,
    shape: shapeOf(connectorInfo('src', 'source', 1)),
    kafka: 'ConnectorsResource.getConnector',
  },
  {
    title: 'GET /connectors/{unknown}',
    method: 'GET',
    path: '/connectors/nope',
    status: 404,
    message: 'Connector nope not found',
    kafka: 'StandaloneHerder/DistributedHerder.connectorInfo',
  },
  {
    title: 'GET /connectors/{name}/config is its config',
    method: 'GET',
    path: '/connectors/src/config',
    status: 200,
    shape: shapeOf({ ...source(), name: 'src' }),
    kafka: 'ConnectorsResource.getConnectorConfig',
  },
  {
    title: 'GET /connectors/{unknown}/config',
    method: 'GET',
    path: '/connectors/nope/config',
    status: 404,
    message: 'Connector nope not found',
    kafka: 'AbstractHerder.connectorConfig via connectorInfo',
  },
  {
    title: 'GET /connectors/{name}/status is its ConnectorStateInfo',
    method: 'GET',
    path: '/connectors/src/status',
    status: 200,
    shape: shapeOf({
      name: 'src',
      connector: { state: 'RUNNING', worker_id: expect.any(String) },
      tasks: [{ id: 0, state: 'RUNNING', worker_id: expect.any(String) }],
      type: 'source',
    }),
    kafka: 'AbstractHerder.connectorStatus',
  },
  {
    title: 'GET /connectors/{unknown}/status',
    method: 'GET',
    path: '/connectors/nope/status',
    status: 404,
    message: 'No status found for connector nope',
    kafka: 'AbstractHerder.connectorStatus',
  },
  {
    title: 'GET /connectors/{name}/tasks lists TaskInfos',
    method: 'GET',
    path: '/connectors/src/tasks',
    status: 200,
    shape: shapeOf([
      { id: { connector: 'src', task: 0 }, config: expect.objectContaining({ topic: TOPIC }) },
    ]),
    kafka: 'ConnectorsResource.getTaskConfigs',
  },
  {
    title: 'GET /connectors/{unknown}/tasks',
    method: 'GET',
    path: '/connectors/nope/tasks',
    status: 404,
    message: 'Connector nope not found',
    kafka: 'StandaloneHerder/DistributedHerder.taskConfigs',
  },
  {
    title: 'GET /connectors/{name}/tasks-config maps task ids to configs (deprecated)',
    method: 'GET',
    path: '/connectors/src/tasks-config',
    status: 200,
    shape: shapeOf({ 'src-0': expect.objectContaining({ topic: TOPIC }) }),
    kafka: 'ConnectorsResource.getTasksConfig (ConnectorTaskId keys written with toString)',
  },
  {
    title: 'GET /connectors/{unknown}/tasks-config',
    method: 'GET',
    path: '/connectors/nope/tasks-config',
    status: 404,
    message: 'Connector nope not found',
    kafka: 'StandaloneHerder/DistributedHerder.tasksConfig',
  },
  {
    title: 'GET /connectors/{name}/tasks/{id}/status is its TaskState',
    method: 'GET',
    path: '/connectors/src/tasks/0/status',
    status: 200,
    shape: shapeOf({ id: 0, state: 'RUNNING', worker_id: expect.any(String) }),
    kafka: 'AbstractHerder.taskStatus',
  },
  {
    title: 'GET /connectors/{name}/tasks/{unknown}/status',
    method: 'GET',
    path: '/connectors/src/tasks/7/status',
    status: 404,
    message: 'No status found for task src-7',
    kafka: 'AbstractHerder.taskStatus',
  },
  {
    title: 'GET /connectors/{unknown}/tasks/0/status',
    method: 'GET',
    path: '/connectors/nope/tasks/0/status',
    status: 404,
    message: 'No status found for task nope-0',
    kafka: 'AbstractHerder.taskStatus',
  },
  {
    title: 'GET /connectors/{name}/tasks/{not a number}/status is Jersey 404',
    method: 'GET',
    path: '/connectors/src/tasks/abc/status',
    status: 404,
    message: 'HTTP 404 Not Found',
    kafka: 'JAX-RS @PathParam Integer that does not parse',
  },
  {
    title: 'GET /connectors/{name}/topics lists the topics it used',
    method: 'GET',
    path: '/connectors/src/topics',
    status: 200,
    shape: shapeOf({ src: { topics: [TOPIC] } }),
    kafka: 'ConnectorsResource.getConnectorActiveTopics',
  },
  {
    title: 'GET /connectors/{unknown}/topics is 200 with no topics',
    method: 'GET',
    path: '/connectors/nope/topics',
    status: 200,
    shape: shapeOf({ nope: { topics: [] } }),
    kafka: 'AbstractHerder.connectorActiveTopics (no existence check)',
  },
  {
    title: 'GET /connectors/{name}/offsets lists source offsets',
    method: 'GET',
    path: '/connectors/src/offsets',
    status: 200,
    shape: (body) =>
      expect(body).toEqual({
        offsets: expect.arrayContaining([
          { partition: { filename: inFile }, offset: { position: expect.any(Number) } },
        ]),
      }),
    kafka: 'ConnectorsResource.getOffsets',
  },
  {
    title: 'GET /connectors/{unknown}/offsets',
    method: 'GET',
    path: '/connectors/nope/offsets',
    status: 404,
    message: 'Connector nope not found',
    kafka: 'AbstractHerder.connectorOffsets',
  },

  // ---- plugins ------------------------------------------------------------------------------
  {
    title: 'GET /connector-plugins lists connectors only',
    method: 'GET',
    path: '/connector-plugins',
    status: 200,
    shape: (body) => {
      const list = body as Array<{ class: string; type: string; version: string }>;
      expect(list).toContainEqual({
        class: SOURCE_CLASS,
        type: 'source',
        version: expect.any(String),
      });
      expect(new Set(list.map((p) => p.type))).toEqual(new Set(['source', 'sink']));
    },
    kafka: 'ConnectorPluginsResource.listConnectorPlugins',
  },
  {
    title: 'GET /connector-plugins?connectorsOnly=false lists every plugin type',
    method: 'GET',
    path: '/connector-plugins?connectorsOnly=false',
    status: 200,
    shape: (body) => {
      const types = new Set((body as Array<{ type: string }>).map((p) => p.type));
      for (const t of [
        'source',
        'sink',
        'transformation',
        'predicate',
        'converter',
        'header_converter',
      ])
        expect(types).toContain(t);
    },
    kafka: 'ConnectorPluginsResource.listConnectorPlugins',
  },
  {
    title: 'GET /connector-plugins/{plugin}/config lists ConfigKeyInfos',
    method: 'GET',
    path: '/connector-plugins/FileStreamSource/config',
    status: 200,
    shape: (body) =>
      expect(body).toContainEqual({
        name: 'file',
        type: expect.any(String),
        required: expect.any(Boolean),
        default_value: null,
        importance: expect.any(String),
        documentation: expect.any(String),
        group: null,
        order: expect.any(Number),
        width: expect.any(String),
        display_name: 'file',
        dependents: [],
      }),
    kafka: 'AbstractHerder.connectorPluginConfig',
  },
  {
    title: 'GET /connector-plugins/{converter}/config lists its keys',
    method: 'GET',
    path: '/connector-plugins/org.apache.kafka.connect.json.JsonConverter/config',
    status: 200,
    shape: (body) =>
      expect((body as Array<{ name: string }>).map((k) => k.name)).toContain('schemas.enable'),
    kafka: 'AbstractHerder.connectorPluginConfig (converters: their own ConfigDef)',
  },
  {
    title: 'GET /connector-plugins/{unknown}/config',
    method: 'GET',
    path: '/connector-plugins/Nope/config',
    status: 404,
    message: 'Unknown plugin Nope.',
    kafka: 'AbstractHerder.connectorPluginConfig',
  },
  {
    title: 'PUT .../config/validate names the connector.class as given (an alias)',
    method: 'PUT',
    path: '/connector-plugins/FileStreamSource/config/validate',
    body: { ...source(), name: 'v' },
    status: 200,
    shape: (body) =>
      expect(body).toMatchObject({
        name: 'FileStreamSource',
        error_count: 0,
        groups: expect.any(Array),
        configs: expect.any(Array),
      }),
    kafka:
      'AbstractHerder.validateConnectorConfig: mergeConfigInfos(connType, ...), connType = connector.class',
  },
  {
    title: 'PUT .../config/validate names the connector.class as given (a class name)',
    method: 'PUT',
    path: '/connector-plugins/FileStreamSourceConnector/config/validate',
    body: { ...source({ 'connector.class': SOURCE_CLASS }), name: 'v' },
    status: 200,
    shape: (body) => expect(body).toMatchObject({ name: SOURCE_CLASS, error_count: 0 }),
    kafka: 'AbstractHerder.validateConnectorConfig',
  },
  {
    title: 'PUT .../config/validate counts the errors of an invalid config',
    method: 'PUT',
    path: '/connector-plugins/FileStreamSource/config/validate',
    body: { 'connector.class': 'FileStreamSource', name: 'v', 'tasks.max': 'many' },
    status: 200,
    shape: (body) =>
      expect((body as { error_count: number }).error_count).toBeGreaterThanOrEqual(1),
    kafka: 'AbstractHerder.validateConnectorConfig',
  },
  {
    title: 'PUT .../config/validate with another plugin in the body',
    method: 'PUT',
    path: '/connector-plugins/FileStreamSink/config/validate',
    body: source(),
    status: 400,
    message: 'Included connector type FileStreamSource does not match request type FileStreamSink',
    kafka: 'ConnectorPluginsResource.validateConfigs',
  },
  {
    title: 'PUT .../config/validate with no connector.class',
    method: 'PUT',
    path: '/connector-plugins/FileStreamSource/config/validate',
    body: { topic: 'x' },
    status: 400,
    message: 'Connector config {topic=x} contains no connector type',
    kafka: 'AbstractHerder.validateConnectorConfig',
  },
  {
    title: 'PUT .../config/validate with a class nobody provides',
    method: 'PUT',
    path: '/connector-plugins/Nope/config/validate',
    body: { 'connector.class': 'Nope' },
    status: 400,
    message: /^Failed to find any class that implements Connector and which name matches Nope, /,
    kafka: 'Plugins.connectorClass: a ConnectException nothing maps, hence 500',
    differs: "a client's mistake, not the server's: 400 (src/connect/runtime/config-validation.ts)",
  },
  {
    title: 'PUT .../config/validate with a body that is not JSON',
    method: 'PUT',
    path: '/connector-plugins/FileStreamSource/config/validate',
    raw: '{"connector.class": ',
    status: 400,
    message: /^Invalid JSON in request body: /,
    kafka: "Jackson's JsonParseException: no mapper for it is registered, hence 500",
    differs: "a client's mistake, not the server's: 400 (rest-server.ts)",
  },

  // ---- create ---------------------------------------------------------------------------------
  {
    title: 'POST /connectors creates a connector',
    method: 'POST',
    path: '/connectors',
    body: { name: 'made', config: source() },
    status: 201,
    shape: shapeOf({
      name: 'made',
      config: { ...source(), name: 'made' },
      tasks: expect.any(Array),
      type: 'source',
    }),
    kafka: 'ConnectorsResource.createConnector',
  },
  {
    title: 'POST /connectors for an existing name',
    method: 'POST',
    path: '/connectors',
    body: { name: 'src', config: source() },
    status: 409,
    message: 'Connector src already exists',
    kafka: 'StandaloneHerder/DistributedHerder.putConnectorConfig',
  },
  {
    title: 'POST /connectors without a name',
    method: 'POST',
    path: '/connectors',
    body: { config: source() },
    status: 400,
    message: /^Connector configuration is invalid and contains the following 1 error\(s\):\n.*name/,
    kafka: 'ConnectorsResource.createConnector (name "" left to validation)',
  },
  {
    title: 'POST /connectors whose config names another connector',
    method: 'POST',
    path: '/connectors',
    body: { name: 'a', config: { ...source(), name: 'b' } },
    status: 400,
    message: "Connector name configuration (b) doesn't match connector name in the URL (a)",
    kafka: 'ConnectorsResource.checkAndPutConnectorConfigName',
  },
  {
    title: 'POST /connectors with an invalid config lists the errors',
    method: 'POST',
    path: '/connectors',
    body: { name: 'bad', config: source({ 'tasks.max': 'many' }) },
    status: 400,
    message:
      /^Connector configuration is invalid and contains the following 1 error\(s\):\nInvalid value many for configuration tasks.max: .*\nYou can also find the above list of errors at the endpoint `\/connector-plugins\/\{connectorType\}\/config\/validate`$/,
    kafka: 'AbstractHerder.maybeAddConfigErrors',
  },
  {
    title: 'POST /connectors with a null config value',
    method: 'POST',
    path: '/connectors',
    body: { name: 'nulls', config: { ...source(), 'batch.size': null } },
    status: 400,
    message:
      'Connector configuration is invalid and contains the following 1 error(s):\nNull value can not be supplied as the configuration value.\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`',
    kafka: 'AbstractHerder.validateConnectorConfig (null values)',
  },
  {
    title: 'POST /connectors with a body that is not JSON',
    method: 'POST',
    path: '/connectors',
    raw: '{"name": "x", ',
    status: 400,
    message: /^Invalid JSON in request body: /,
    kafka: "Jackson's JsonParseException: no mapper for it is registered, hence 500",
    differs: "a client's mistake, not the server's: 400 (rest-server.ts)",
  },
  {
    title: 'POST /connectors whose config is not an object',
    method: 'POST',
    path: '/connectors',
    body: { name: 'x', config: 'FileStreamSource' },
    status: 400,
    message: 'body/config must be object',
    kafka: "Jackson's MismatchedInputException: nothing maps it, hence 500",
    differs: "a client's mistake, not the server's: 400 (route schema)",
  },
  {
    title: 'POST /connectors whose config values are objects',
    method: 'POST',
    path: '/connectors',
    body: { name: 'x', config: { ...source(), 'tasks.max': { n: 1 } } },
    status: 400,
    message: /^body\/config\/tasks\.max must be string,null$/,
    kafka: "Jackson's MismatchedInputException: nothing maps it, hence 500",
    differs: "a client's mistake, not the server's: 400 (route schema)",
  },
  {
    title: 'POST /connectors with an initial_state Kafka does not know',
    method: 'POST',
    path: '/connectors',
    body: { name: 'x', config: source(), initial_state: 'asleep' },
    status: 400,
    message: 'Invalid initial_state asleep: must be one of RUNNING, PAUSED, STOPPED (in any case)',
    kafka:
      "InitialState.forValue's IllegalArgumentException inside Jackson: nothing maps it, hence 500",
    differs: "a client's mistake, not the server's: 400 (connectors-resource.ts)",
  },
  {
    title: 'POST /connectors without a config',
    method: 'POST',
    path: '/connectors',
    body: { name: 'x' },
    status: 400,
    message: "body must have required property 'config'",
    kafka: 'checkAndPutConnectorConfigName on a null config: a NullPointerException, hence 500',
    differs: "a client's mistake, not the server's: 400 (route schema)",
  },

  // ---- replace and patch ----------------------------------------------------------------------
  {
    title: 'PUT /connectors/{name}/config replaces an existing config',
    method: 'PUT',
    path: '/connectors/made/config',
    body: source(),
    status: 200,
    shape: shapeOf({
      name: 'made',
      config: { ...source(), name: 'made' },
      tasks: expect.any(Array),
      type: 'source',
    }),
    kafka: 'ConnectorsResource.putConnectorConfig',
  },
  {
    title: 'PUT /connectors/{new}/config creates it',
    method: 'PUT',
    path: '/connectors/fresh/config',
    body: source(),
    status: 201,
    shape: shapeOf({
      name: 'fresh',
      config: { ...source(), name: 'fresh' },
      tasks: expect.any(Array),
      type: 'source',
    }),
    kafka: 'ConnectorsResource.putConnectorConfig',
  },
  {
    title: 'PUT /connectors/{name}/config whose name is another',
    method: 'PUT',
    path: '/connectors/made/config',
    body: { ...source(), name: 'other' },
    status: 400,
    message: "Connector name configuration (other) doesn't match connector name in the URL (made)",
    kafka: 'ConnectorsResource.checkAndPutConnectorConfigName',
  },
  {
    title: 'PUT /connectors/{name}/config with a body that is not JSON',
    method: 'PUT',
    path: '/connectors/made/config',
    raw: '{"connector.class"',
    status: 400,
    message: /^Invalid JSON in request body: /,
    kafka: "Jackson's JsonParseException: no mapper for it is registered, hence 500",
    differs: "a client's mistake, not the server's: 400 (rest-server.ts)",
  },
  {
    title: 'PUT /connectors/{name}/config with an array',
    method: 'PUT',
    path: '/connectors/made/config',
    body: [source()],
    status: 400,
    message: 'body must be object',
    kafka: "Jackson's MismatchedInputException: nothing maps it, hence 500",
    differs: "a client's mistake, not the server's: 400 (route schema)",
  },
  {
    title: 'PATCH /connectors/{name}/config merges the patch',
    method: 'PATCH',
    path: '/connectors/made/config',
    body: { 'batch.size': '10' },
    status: 200,
    shape: shapeOf({
      name: 'made',
      config: { ...source(), name: 'made', 'batch.size': '10' },
      tasks: expect.any(Array),
      type: 'source',
    }),
    kafka: 'ConnectorsResource.patchConnectorConfig',
  },
  {
    title: 'PATCH /connectors/{unknown}/config',
    method: 'PATCH',
    path: '/connectors/nope/config',
    body: { 'batch.size': '10' },
    status: 404,
    message: 'Connector nope not found',
    kafka: 'StandaloneHerder/DistributedHerder.patchConnectorConfig',
  },
  {
    title: 'PATCH /connectors/{name}/config that renames it',
    method: 'PATCH',
    path: '/connectors/made/config',
    body: { name: 'other' },
    status: 400,
    message: "Connector name configuration (other) doesn't match connector name in the URL (made)",
    kafka: 'patchConnectorConfig stores the patched name under the old one (200)',
    differs: 'a config whose name is not its connector would be stored: refused as PUT refuses it',
  },

  // ---- topics ---------------------------------------------------------------------------------
  {
    title: 'PUT /connectors/{name}/topics/reset',
    method: 'PUT',
    path: '/connectors/snk/topics/reset',
    status: 202,
    kafka: 'ConnectorsResource.resetConnectorActiveTopics',
  },
  {
    title: 'PUT /connectors/{unknown}/topics/reset is 202',
    method: 'PUT',
    path: '/connectors/nope/topics/reset',
    status: 202,
    kafka: 'AbstractHerder.resetConnectorActiveTopics (no existence check)',
  },

  // ---- restarts -------------------------------------------------------------------------------
  {
    title: 'POST /connectors/{name}/restart?onlyFailed=true plans nothing for a healthy connector',
    method: 'POST',
    path: '/connectors/src/restart?includeTasks=true&onlyFailed=true',
    status: 202,
    shape: shapeOf({
      name: 'src',
      connector: { state: 'RUNNING', worker_id: expect.any(String) },
      tasks: [{ id: 0, state: 'RUNNING', worker_id: expect.any(String) }],
      type: 'source',
    }),
    kafka: 'ConnectorsResource.restartConnector, RestartPlan',
  },
  {
    title: 'POST /connectors/{name}/restart?includeTasks=true plans connector and tasks',
    method: 'POST',
    path: '/connectors/src/restart?includeTasks=true',
    status: 202,
    shape: shapeOf({
      name: 'src',
      connector: { state: 'RESTARTING', worker_id: expect.any(String) },
      tasks: [{ id: 0, state: 'RESTARTING', worker_id: expect.any(String) }],
      type: 'source',
    }),
    kafka: 'ConnectorsResource.restartConnector, RestartPlan',
  },
  {
    title: 'POST /connectors/{unknown}/restart?includeTasks=true',
    method: 'POST',
    path: '/connectors/nope/restart?includeTasks=true',
    status: 404,
    message: 'Unknown connector: nope',
    kafka: 'StandaloneHerder/DistributedHerder.restartConnectorAndTasks',
  },
  {
    title: 'POST /connectors/{name}/restart restarts the connector alone',
    method: 'POST',
    path: '/connectors/snk/restart',
    status: 204,
    kafka: 'ConnectorsResource.restartConnector',
  },
  {
    title: 'POST /connectors/{unknown}/restart',
    method: 'POST',
    path: '/connectors/nope/restart',
    status: 404,
    message: { standalone: 'Connector nope not found', distributed: 'Unknown connector: nope' },
    kafka: 'StandaloneHerder/DistributedHerder.restartConnector',
  },
  {
    title: 'POST /connectors/{name}/tasks/{id}/restart',
    method: 'POST',
    path: '/connectors/snk/tasks/0/restart',
    status: 204,
    kafka: 'ConnectorsResource.restartTask',
  },
  {
    title: 'POST /connectors/{name}/tasks/{unknown}/restart',
    method: 'POST',
    path: '/connectors/snk/tasks/7/restart',
    status: 404,
    message: { standalone: 'Task snk-7 not found', distributed: 'Unknown task: snk-7' },
    kafka: 'StandaloneHerder/DistributedHerder.restartTask',
  },
  {
    title: 'POST /connectors/{unknown}/tasks/0/restart',
    method: 'POST',
    path: '/connectors/nope/tasks/0/restart',
    status: 404,
    message: { standalone: 'Connector nope not found', distributed: 'Unknown connector: nope' },
    kafka: 'StandaloneHerder/DistributedHerder.restartTask',
  },

  // ---- target states --------------------------------------------------------------------------
  {
    title: 'PUT /connectors/{name}/pause',
    method: 'PUT',
    path: '/connectors/snk/pause',
    status: 202,
    kafka: 'ConnectorsResource.pauseConnector',
  },
  {
    title: 'PUT /connectors/{unknown}/pause',
    method: 'PUT',
    path: '/connectors/nope/pause',
    status: 404,
    message: 'Unknown connector nope',
    kafka: 'AbstractHerder.pauseConnector',
  },
  {
    title: 'PUT /connectors/{name}/resume',
    method: 'PUT',
    path: '/connectors/snk/resume',
    status: 202,
    kafka: 'ConnectorsResource.resumeConnector',
  },
  {
    title: 'PUT /connectors/{unknown}/resume',
    method: 'PUT',
    path: '/connectors/nope/resume',
    status: 404,
    message: 'Unknown connector nope',
    kafka: 'AbstractHerder.resumeConnector',
  },
  {
    title: 'PUT /connectors/{name}/stop',
    method: 'PUT',
    path: '/connectors/snk/stop',
    status: 204,
    kafka: 'ConnectorsResource.stopConnector',
  },
  {
    title: 'PUT /connectors/{unknown}/stop',
    method: 'PUT',
    path: '/connectors/nope/stop',
    status: 404,
    message: 'Unknown connector nope',
    kafka: 'DistributedHerder.stopConnector (the standalone herder fails in its config store: 500)',
  },

  // ---- offsets --------------------------------------------------------------------------------
  {
    title: 'PATCH /connectors/{running}/offsets',
    method: 'PATCH',
    path: '/connectors/src/offsets',
    body: { offsets: [{ partition: { filename: inFile }, offset: { position: 0 } }] },
    status: 400,
    message: NOT_STOPPED('src'),
    kafka: 'StandaloneHerder/DistributedHerder.modifyConnectorOffsetsChecks',
  },
  {
    title: 'PATCH /connectors/{unknown}/offsets',
    method: 'PATCH',
    path: '/connectors/nope/offsets',
    body: { offsets: [{ partition: { filename: inFile }, offset: { position: 0 } }] },
    status: 404,
    message: 'Connector nope not found',
    kafka: 'StandaloneHerder/DistributedHerder.modifyConnectorOffsetsChecks',
  },
  {
    title: 'PATCH /connectors/{name}/offsets with no offsets',
    method: 'PATCH',
    path: '/connectors/halted/offsets',
    body: { offsets: [] },
    status: 400,
    message: 'Partitions / offsets need to be provided for an alter offsets request',
    kafka: 'ConnectorsResource.alterConnectorOffsets',
  },
  {
    title: 'PATCH /connectors/{name}/offsets with an empty body',
    method: 'PATCH',
    path: '/connectors/halted/offsets',
    body: {},
    status: 400,
    message: 'Partitions / offsets need to be provided for an alter offsets request',
    kafka: 'ConnectorsResource.alterConnectorOffsets',
  },
  {
    title: 'PATCH /connectors/{name}/offsets whose offsets are not a list',
    method: 'PATCH',
    path: '/connectors/halted/offsets',
    body: { offsets: { partition: {} } },
    status: 400,
    message: 'body/offsets must be array,null',
    kafka: "Jackson's MismatchedInputException: nothing maps it, hence 500",
    differs: "a client's mistake, not the server's: 400 (route schema)",
  },
  {
    title: 'PATCH /connectors/{stopped}/offsets alters them',
    method: 'PATCH',
    path: '/connectors/halted/offsets',
    body: { offsets: [{ partition: { filename: inFile }, offset: { position: 0 } }] },
    status: 200,
    shape: (body) =>
      expect([offsetsMessages.altered, offsetsMessages.alteredFrameworkOnly]).toContainEqual(
        (body as { message: string }).message,
      ),
    kafka: 'Worker.modifyConnectorOffsets',
  },
  {
    title: 'PATCH /connectors/{stopped sink}/offsets whose partition is not a Kafka partition',
    method: 'PATCH',
    path: '/connectors/snk/offsets',
    body: { offsets: [{ partition: { topic: TOPIC }, offset: { kafka_offset: 1 } }] },
    status: 400,
    message:
      "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'",
    kafka: 'SinkUtils.validateAndParseSinkConnectorOffsets',
  },
  {
    title: 'PATCH /connectors/{stopped sink}/offsets whose offset is not a number',
    method: 'PATCH',
    path: '/connectors/snk/offsets',
    body: {
      offsets: [
        { partition: { kafka_topic: TOPIC, kafka_partition: 0 }, offset: { kafka_offset: 'x' } },
      ],
    },
    status: 400,
    message:
      "Failed to parse the following Kafka offset value in the provided offsets: 'x'. Offset values for sink connectors need to be integers.",
    kafka: 'SinkUtils.validateAndParseSinkConnectorOffsets',
  },
  {
    title: 'DELETE /connectors/{running}/offsets',
    method: 'DELETE',
    path: '/connectors/src/offsets',
    status: 400,
    message: NOT_STOPPED('src'),
    kafka: 'StandaloneHerder/DistributedHerder.modifyConnectorOffsetsChecks',
  },
  {
    title: 'DELETE /connectors/{unknown}/offsets',
    method: 'DELETE',
    path: '/connectors/nope/offsets',
    status: 404,
    message: 'Connector nope not found',
    kafka: 'StandaloneHerder/DistributedHerder.modifyConnectorOffsetsChecks',
  },
  {
    title: 'DELETE /connectors/{stopped}/offsets resets them',
    method: 'DELETE',
    path: '/connectors/halted/offsets',
    status: 200,
    shape: (body) =>
      expect([offsetsMessages.reset, offsetsMessages.resetFrameworkOnly]).toContainEqual(
        (body as { message: string }).message,
      ),
    kafka: 'Worker.modifyConnectorOffsets',
  },

  // ---- delete ---------------------------------------------------------------------------------
  {
    title: 'DELETE /connectors/{name}',
    method: 'DELETE',
    path: '/connectors/doomed',
    status: 204,
    kafka: 'ConnectorsResource.destroyConnector',
  },
  {
    title: 'DELETE /connectors/{unknown}',
    method: 'DELETE',
    path: '/connectors/nope',
    status: 404,
    message: 'Connector nope not found',
    kafka: 'StandaloneHerder/DistributedHerder.deleteConnectorConfig',
  },

  // ---- loggers --------------------------------------------------------------------------------
  {
    title: 'GET /admin/loggers lists levels, root among them',
    method: 'GET',
    path: '/admin/loggers',
    status: 200,
    shape: (body) =>
      expect(body).toMatchObject({
        root: {
          level: expect.any(String),
          last_modified: expect.toBeOneOf([null, expect.any(Number)]),
        },
      }),
    kafka: 'LoggingResource.listLoggers',
  },
  {
    title: 'PUT /admin/loggers/{name} sets a level and lists the loggers it changed',
    method: 'PUT',
    path: '/admin/loggers/conformance.probe',
    body: { level: 'WARN' },
    status: 200,
    shape: (body) => expect(body).toContain('conformance.probe'),
    kafka: 'LoggingResource.setLevel',
  },
  {
    title: 'GET /admin/loggers/{name} after it was set',
    method: 'GET',
    path: '/admin/loggers/conformance.probe',
    status: 200,
    shape: shapeOf({ level: 'WARN', last_modified: expect.any(Number) }),
    kafka: 'LoggingResource.getLogger',
  },
  {
    title: 'PUT /admin/loggers/{name}?scope=cluster sets it on every worker: 204',
    method: 'PUT',
    path: '/admin/loggers/conformance.probe?scope=cluster',
    body: { level: 'WARN' },
    status: 204,
    kafka: 'LoggingResource.setLevel (cluster scope)',
  },
  {
    title: 'GET /admin/loggers/{unknown}',
    method: 'GET',
    path: '/admin/loggers/no.such.logger',
    status: 404,
    message: 'Logger no.such.logger not found.',
    kafka: 'LoggingResource.getLogger',
  },
  {
    title: 'PUT /admin/loggers/{name} without a level',
    method: 'PUT',
    path: '/admin/loggers/conformance.probe',
    body: {},
    status: 400,
    message: "Desired 'level' parameter was not specified in request.",
    kafka: 'LoggingResource.setLevel',
  },
  {
    title: 'PUT /admin/loggers/{name} with a level log4j does not know',
    method: 'PUT',
    path: '/admin/loggers/conformance.probe',
    body: { level: 'LOUD' },
    status: 404,
    message: "invalid log level 'LOUD'.",
    kafka: 'LoggingResource.setLevel',
  },
];

function forMode<T>(value: PerMode<T>, mode: Mode): T {
  return typeof value === 'object' && value !== null && 'standalone' in value ? value[mode] : value;
}

async function ask(worker: { restUrl: string }, c: Case) {
  if (c.raw !== undefined) return restText(worker, c.method, c.path, c.raw);
  return rest(worker, c.method, c.path, c.body);
}

let broker: TestBroker;
beforeAll(async () => {
  writeFileSync(inFile, 'one\ntwo\n');
  // A short minimum session timeout lets the distributed worker's first join be quick.
  broker = await startTestBroker({ config: { 'group.min.session.timeout.ms': 500 } });
});
afterAll(async () => {
  await broker?.stop();
  dir.remove();
});

interface RunningWorker {
  restUrl: string;
  stop(): Promise<void>;
}

const starters: Record<Mode, () => Promise<RunningWorker>> = {
  standalone: () =>
    startStandaloneWorker({
      config: workerConfig(broker.bootstrap, dir.path, {
        'offset.storage.file.filename': join(dir.path, 'standalone.offsets'),
      }),
      connectors: [],
    }),
  distributed: () => {
    const loaded = loadConfig({
      defs: distributedWorkerDefs,
      env: {},
      envPrefix: 'CONNECT_',
      options: [
        `bootstrap.servers=${broker.bootstrap}`,
        `plugin.path=${testPluginPath}`,
        'listeners=http://127.0.0.1:0',
        'group.id=conformance',
        'session.timeout.ms=3000',
        'heartbeat.interval.ms=300',
        'offset.flush.interval.ms=200',
        'key.converter=org.apache.kafka.connect.storage.StringConverter',
        'value.converter=org.apache.kafka.connect.storage.StringConverter',
      ],
      passthroughPrefixes: workerPassthroughPrefixes,
    });
    if (loaded.errors.length > 0) throw new Error(JSON.stringify(loaded.errors));
    return startDistributedWorker({ config: loaded.values });
  },
};

/** The connectors every row may name, in the state the rows expect. */
async function setUpFixture(worker: RunningWorker): Promise<void> {
  const create = (name: string, config: Record<string, string>, initial?: string) =>
    // The first write of a distributed worker waits for its first rebalance.
    waitFor(`${name} created`, async () => {
      const r = await rest(worker, 'POST', '/connectors', {
        name,
        config,
        ...(initial ? { initial_state: initial } : {}),
      });
      if (r.status !== 201) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
      return r;
    });
  await create('src', source());
  await create('snk', sink);
  await create('halted', source(), 'STOPPED');
  await create('doomed', source());
  for (const name of ['src', 'snk']) {
    await waitFor(`${name} and its task running`, async () => {
      const { body } = await rest(worker, 'GET', `/connectors/${name}/status`);
      return body?.connector?.state === 'RUNNING' && body.tasks?.[0]?.state === 'RUNNING'
        ? true
        : undefined;
    });
  }
  // Rows read the source's topic and committed offsets.
  await waitFor('the source topic tracked', async () => {
    const { body } = await rest(worker, 'GET', '/connectors/src/topics');
    return body?.src?.topics?.includes(TOPIC) ? true : undefined;
  });
  await waitFor('the source offsets committed', async () => {
    const { body } = await rest(worker, 'GET', '/connectors/src/offsets');
    return body?.offsets?.length > 0 ? true : undefined;
  });
}

describe.each(['standalone', 'distributed'] as const)('a %s worker', (mode) => {
  let worker: RunningWorker;
  beforeAll(async () => {
    worker = await starters[mode]();
    await setUpFixture(worker);
  }, 90_000);
  afterAll(async () => {
    await worker?.stop();
  });

  const titled = cases.map(
    (c) => [c.differs ? `${c.title} (not Kafka's, on purpose)` : c.title, c] as const,
  );
  it.each(titled)('%s', async (_title, c) => {
    const answer = await ask(worker, c);
    if (c.message !== undefined) {
      const message = forMode(c.message, mode);
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: c.status,
        body: {
          error_code: c.status,
          message: message instanceof RegExp ? expect.stringMatching(message) : message,
        },
      });
      return;
    }
    expect(answer.status, JSON.stringify(answer.body)).toBe(c.status);
    if (c.shape) c.shape(answer.body);
    else expect(answer.body).toBeNull();
  });
});

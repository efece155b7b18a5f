import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { definePlugins, type ValidationContext } from '../../../../src/connect/api/index.ts';
import { HerderError } from '../../../../src/connect/herder/herder.ts';
import {
  type ConfigInfos,
  configErrorMessages,
  validateConnectorConfig,
  validationContext,
} from '../../../../src/connect/runtime/config-validation.ts';
import { loadPlugins, type PluginRegistry } from '../../../../src/connect/runtime/plugins.ts';
import { sinkConfig, sourceConfig, testPlugins } from '../rest/rest-fixture.ts';

let plugins: PluginRegistry;
beforeAll(async () => {
  plugins = await testPlugins();
});

/** A cluster with no other connector. */
const alone = validationContext(null, []);

function value(infos: ConfigInfos, name: string) {
  return infos.configs.find((c) => c.value?.name === name || c.definition?.name === name);
}

describe('validateConnectorConfig', () => {
  it('checks a plugin key validator (a single topic for FileStreamSource)', () => {
    const infos = validateConnectorConfig(plugins, sourceConfig('s', { topic: 'a,b' }), alone);
    expect(configErrorMessages(infos)).toEqual([
      "Invalid value a,b for configuration topic: 'topic' in FileStreamSourceConnector configuration requires definition of a single topic",
    ]);
  });

  it('a valid file source config has no errors and shows typed values and defaults as strings', () => {
    const infos = validateConnectorConfig(plugins, sourceConfig('s'), alone);
    expect(infos.error_count).toBe(0);
    expect(infos.name).toBe('FileStreamSource');
    expect(value(infos, 'batch.size')?.value?.value).toBe('2000');
    expect(value(infos, 'errors.tolerance')?.value?.value).toBe('none');
    expect(value(infos, 'tasks.max')).toEqual({
      definition: {
        name: 'tasks.max',
        type: 'INT',
        required: false,
        default_value: '1',
        importance: 'HIGH',
        documentation: 'Maximum number of tasks to use for this connector.',
        group: 'Common',
        order: 3,
        width: 'NONE',
        display_name: 'tasks.max',
        dependents: [],
      },
      value: { name: 'tasks.max', value: '1', recommended_values: [], errors: [], visible: true },
    });
  });

  it('reports a missing file key with Kafka ConfigDef text', () => {
    const { file: _, ...config } = sourceConfig('s');
    const infos = validateConnectorConfig(plugins, config, alone);
    expect(infos.error_count).toBe(1);
    expect(value(infos, 'file')?.value).toEqual({
      name: 'file',
      value: null,
      recommended_values: [],
      errors: ['Missing required configuration "file" which has no default value.'],
      visible: true,
    });
  });

  it('reports a bad tasks.max, unparsable and out of range', () => {
    const word = validateConnectorConfig(plugins, sourceConfig('s', { 'tasks.max': 'two' }), alone);
    expect(configErrorMessages(word)).toEqual([
      'Invalid value two for configuration tasks.max: expected a whole number',
    ]);
    expect(value(word, 'tasks.max')?.value?.value).toBeNull();
    const zero = validateConnectorConfig(plugins, sourceConfig('s', { 'tasks.max': '0' }), alone);
    expect(configErrorMessages(zero)).toEqual([
      'Invalid value 0 for configuration tasks.max: must be at least 1',
    ]);
    expect(value(zero, 'tasks.max')?.value?.value).toBe('0');
  });

  it('reports an unknown transform type and recommends the installed transformations', () => {
    const infos = validateConnectorConfig(
      plugins,
      sinkConfig('s', { transforms: 'route', 'transforms.route.type': 'com.nope.Transform' }),
      alone,
    );
    expect(infos.error_count).toBe(1);
    const type = value(infos, 'transforms.route.type');
    expect(type?.definition?.group).toBe('Transforms: route');
    expect(type?.value?.errors).toEqual([
      'Invalid value com.nope.Transform for configuration transforms.route.type: Class com.nope.Transform could not be found.',
    ]);
    expect(type?.value?.recommended_values).toContain('connect.transforms.RegexRouter');
    expect(infos.groups).toContain('Transforms: route');
  });

  it("validates a known transform's own keys under its prefix", () => {
    const infos = validateConnectorConfig(
      plugins,
      sinkConfig('s', {
        transforms: 'route',
        'transforms.route.type': 'org.apache.kafka.connect.transforms.RegexRouter',
        'transforms.route.replacement': 'x',
      }),
      alone,
    );
    expect(configErrorMessages(infos)).toEqual([
      'Missing required configuration "transforms.route.regex" which has no default value.',
    ]);
  });

  it('refuses a transform alias whose predicate is not declared', () => {
    const infos = validateConnectorConfig(
      plugins,
      sinkConfig('s', {
        transforms: 'route',
        'transforms.route.type': 'RegexRouter',
        'transforms.route.regex': '.*',
        'transforms.route.replacement': 'x',
        'transforms.route.predicate': 'isTomb',
      }),
      alone,
    );
    expect(configErrorMessages(infos)).toEqual([
      'Invalid value isTomb for configuration transforms.route.predicate: Predicate alias isTomb is not in the predicates list',
    ]);
  });

  it('requires exactly one of topics and topics.regex for sinks', () => {
    const neither = validateConnectorConfig(plugins, sinkConfig('s', { topics: '' }), alone);
    expect(configErrorMessages(neither)).toEqual([
      'Must configure one of topics or topics.regex',
      'Must configure one of topics or topics.regex',
    ]);
    const both = validateConnectorConfig(
      plugins,
      sinkConfig('s', { 'topics.regex': 'l.*' }),
      alone,
    );
    expect(both.error_count).toBe(2);
    expect(configErrorMessages(both)[0]).toBe(
      'topics and topics.regex are mutually exclusive options, but both are set.',
    );
  });

  it("validates the named converters' keys under their prefixes", () => {
    const infos = validateConnectorConfig(
      plugins,
      sinkConfig('s', {
        'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
        'value.converter.schemas.enable': 'maybe',
        'key.converter': 'com.nope.Converter',
      }),
      alone,
    );
    expect(configErrorMessages(infos)).toEqual([
      'Invalid value com.nope.Converter for configuration key.converter: Class com.nope.Converter could not be found.',
      'Invalid value maybe for configuration value.converter.schemas.enable: expected true or false',
    ]);
    expect(infos.error_count).toBe(2);
  });

  it('accepts the built-in SimpleHeaderConverter or a converter plugin as header.converter', () => {
    for (const headerConverter of [
      'org.apache.kafka.connect.storage.SimpleHeaderConverter',
      'org.apache.kafka.connect.storage.StringConverter',
    ]) {
      const infos = validateConnectorConfig(
        plugins,
        sinkConfig('s', { 'header.converter': headerConverter }),
        alone,
      );
      expect(infos.error_count).toBe(0);
    }
    const bad = validateConnectorConfig(
      plugins,
      sinkConfig('s', { 'header.converter': 'com.nope.H' }),
      alone,
    );
    expect(configErrorMessages(bad)).toEqual([
      'Invalid value com.nope.H for configuration header.converter: Class com.nope.H could not be found.',
    ]);
  });

  it('adds KIP-158 topic creation keys when any is set, requiring the default group settings', () => {
    const infos = validateConnectorConfig(
      plugins,
      sourceConfig('s', {
        'topic.creation.groups': 'compacted',
        'topic.creation.default.partitions': '3',
        'topic.creation.compacted.include': 'lines',
      }),
      alone,
    );
    expect(configErrorMessages(infos)).toEqual([
      'Missing required configuration "topic.creation.default.replication.factor" which has no default value.',
    ]);
    expect(infos.groups).toEqual(
      expect.arrayContaining(['Topic Creation: default', 'Topic Creation: compacted']),
    );
  });

  it('reports a null value on any key', () => {
    const infos = validateConnectorConfig(
      plugins,
      { ...sourceConfig('s'), 'some.key': null },
      alone,
    );
    expect(infos.configs[0]).toEqual({
      definition: null,
      value: {
        name: 'some.key',
        value: null,
        recommended_values: [],
        errors: ['Null value can not be supplied as the configuration value.'],
        visible: true,
      },
    });
  });

  it("runs the connector's own validate hook once every key parsed, and not before", async () => {
    const withDatagen = await loadPlugins({
      pluginPath: [fileURLToPath(new URL('../../../../connectors/datagen', import.meta.url))],
      logger: pino({ level: 'silent' }),
    });
    const config = { name: 'gen', 'connector.class': 'connect.datagen.DatagenConnector' };
    const infos = validateConnectorConfig(withDatagen, config, alone);
    expect(configErrorMessages(infos)).toEqual([
      'Missing required configuration "topic" (or "kafka.topic")',
    ]);
    const unparsed = validateConnectorConfig(
      withDatagen,
      {
        ...config,
        'records.per.second': 'fast',
      },
      alone,
    );
    expect(configErrorMessages(unparsed)).toEqual([
      expect.stringMatching(/^Invalid value fast for configuration records.per.second:/),
    ]);
  });

  it('refuses a missing or unknown connector.class as a bad request', () => {
    expect(() => validateConnectorConfig(plugins, { name: 'x' }, alone)).toThrow(
      new HerderError('bad-request', 'Connector config {name=x} contains no connector type'),
    );
    expect(() =>
      validateConnectorConfig(plugins, { 'connector.class': 'JsonConverter' }, alone),
    ).toThrow(
      /Failed to find any class that implements Connector and which name matches JsonConverter/,
    );
  });
});

describe('the validate hook and the cluster it is told about', () => {
  const seen: ValidationContext[] = [];
  const slotPlugins = definePlugins({
    type: 'source',
    className: 'test.SlotSource',
    version: '1',
    configDefs: [{ name: 'slot.name', type: 'string', doc: 'An exclusive resource.' }],
    createConnector: () => ({
      version: () => '1',
      start() {},
      taskConfigs: () => [],
      stop() {},
      validate(values, context) {
        seen.push(context);
        const holder = context.otherConnectors.find(
          (c) => c.config['slot.name'] === values['slot.name'],
        );
        return holder === undefined
          ? []
          : [{ key: 'slot.name', value: values['slot.name'], message: `used by ${holder.name}` }];
      },
    }),
    createTask: () => ({ version: () => '1', start() {}, poll: async () => null, stop() {} }),
  });
  let registry: PluginRegistry;
  beforeAll(async () => {
    registry = await loadPlugins({ pluginPath: [], logger: pino({ level: 'silent' }) });
    registry.add(slotPlugins, 'test');
  });
  const slot = (name: string) => ({
    name,
    'connector.class': 'test.SlotSource',
    'slot.name': 'orders',
  });

  it('leaves the connector under test out of the others, and lists them by name', () => {
    const context = validationContext('b', [
      ['c', slot('c')],
      ['b', slot('b')],
      ['a', slot('a')],
    ]);

    expect(context).toEqual({
      connectorName: 'b',
      otherConnectors: [
        { name: 'a', config: slot('a') },
        { name: 'c', config: slot('c') },
      ],
    });
  });

  it('takes a missing or blank name for none: every stored connector is another', () => {
    for (const name of [undefined, null, '', ' ']) {
      const context = validationContext(name, [['a', slot('a')]]);
      expect(context.connectorName).toBeNull();
      expect(context.otherConnectors.map((c) => c.name)).toEqual(['a']);
    }
  });

  it('hands the hook copies of the stored configs, which it cannot change', () => {
    const stored = slot('a');
    const [other] = validationContext(null, [['a', stored]]).otherConnectors;

    expect(() => {
      (other?.config as Record<string, string>)['slot.name'] = 'changed';
    }).toThrow(TypeError);
    expect(stored['slot.name']).toBe('orders');
  });

  it('gives the hook the context and reports its errors on the key it names', () => {
    seen.length = 0;
    const context = validationContext('second', [['first', slot('first')]]);

    const infos = validateConnectorConfig(registry, slot('second'), context);

    expect(seen).toEqual([context]);
    expect(value(infos, 'slot.name')?.value?.errors).toEqual(['used by first']);
    expect(infos.error_count).toBe(1);
  });
});

import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { HerderError } from '../../../../src/connect/herder/herder.ts';
import {
  type ConfigInfos,
  configErrorMessages,
  validateConnectorConfig,
} from '../../../../src/connect/runtime/config-validation.ts';
import { loadPlugins, type PluginRegistry } from '../../../../src/connect/runtime/plugins.ts';
import { sinkConfig, sourceConfig, testPlugins } from '../rest/rest-fixture.ts';

let plugins: PluginRegistry;
beforeAll(async () => {
  plugins = await testPlugins();
});

function value(infos: ConfigInfos, name: string) {
  return infos.configs.find((c) => c.value?.name === name || c.definition?.name === name);
}

describe('validateConnectorConfig', () => {
  it('checks a plugin key validator (a single topic for FileStreamSource)', () => {
    const infos = validateConnectorConfig(plugins, sourceConfig('s', { topic: 'a,b' }));
    expect(configErrorMessages(infos)).toEqual([
      "Invalid value a,b for configuration topic: 'topic' in FileStreamSourceConnector configuration requires definition of a single topic",
    ]);
  });

  it('a valid file source config has no errors and shows typed values and defaults as strings', () => {
    const infos = validateConnectorConfig(plugins, sourceConfig('s'));
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
        order_in_group: 3,
        width: 'NONE',
        display_name: 'tasks.max',
        dependents: [],
      },
      value: { name: 'tasks.max', value: '1', recommended_values: [], errors: [], visible: true },
    });
  });

  it('reports a missing file key with Kafka ConfigDef text', () => {
    const { file: _, ...config } = sourceConfig('s');
    const infos = validateConnectorConfig(plugins, config);
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
    const word = validateConnectorConfig(plugins, sourceConfig('s', { 'tasks.max': 'two' }));
    expect(configErrorMessages(word)).toEqual([
      'Invalid value two for configuration tasks.max: expected a whole number',
    ]);
    expect(value(word, 'tasks.max')?.value?.value).toBeNull();
    const zero = validateConnectorConfig(plugins, sourceConfig('s', { 'tasks.max': '0' }));
    expect(configErrorMessages(zero)).toEqual([
      'Invalid value 0 for configuration tasks.max: must be at least 1',
    ]);
    expect(value(zero, 'tasks.max')?.value?.value).toBe('0');
  });

  it('reports an unknown transform type and recommends the installed transformations', () => {
    const infos = validateConnectorConfig(
      plugins,
      sinkConfig('s', { transforms: 'route', 'transforms.route.type': 'com.nope.Transform' }),
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
    );
    expect(configErrorMessages(infos)).toEqual([
      'Invalid value isTomb for configuration transforms.route.predicate: Predicate alias isTomb is not in the predicates list',
    ]);
  });

  it('requires exactly one of topics and topics.regex for sinks', () => {
    const neither = validateConnectorConfig(plugins, sinkConfig('s', { topics: '' }));
    expect(configErrorMessages(neither)).toEqual([
      'Must configure one of topics or topics.regex',
      'Must configure one of topics or topics.regex',
    ]);
    const both = validateConnectorConfig(plugins, sinkConfig('s', { 'topics.regex': 'l.*' }));
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
      );
      expect(infos.error_count).toBe(0);
    }
    const bad = validateConnectorConfig(
      plugins,
      sinkConfig('s', { 'header.converter': 'com.nope.H' }),
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
    );
    expect(configErrorMessages(infos)).toEqual([
      'Missing required configuration "topic.creation.default.replication.factor" which has no default value.',
    ]);
    expect(infos.groups).toEqual(
      expect.arrayContaining(['Topic Creation: default', 'Topic Creation: compacted']),
    );
  });

  it('reports a null value on any key', () => {
    const infos = validateConnectorConfig(plugins, { ...sourceConfig('s'), 'some.key': null });
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
    const infos = validateConnectorConfig(withDatagen, config);
    expect(configErrorMessages(infos)).toEqual([
      'Missing required configuration "topic" (or "kafka.topic")',
    ]);
    const unparsed = validateConnectorConfig(withDatagen, {
      ...config,
      'records.per.second': 'fast',
    });
    expect(configErrorMessages(unparsed)).toEqual([
      expect.stringMatching(/^Invalid value fast for configuration records.per.second:/),
    ]);
  });

  it('refuses a missing or unknown connector.class as a bad request', () => {
    expect(() => validateConnectorConfig(plugins, { name: 'x' })).toThrow(
      new HerderError('bad-request', 'Connector config {name=x} contains no connector type'),
    );
    expect(() => validateConnectorConfig(plugins, { 'connector.class': 'JsonConverter' })).toThrow(
      /Failed to find any class that implements Connector and which name matches JsonConverter/,
    );
  });
});

/**
 * The built-in converters as plugin manifests, for the runtime's plugin registry. Each
 * answers to Kafka Connect's class name too, so worker and connector configs written
 * for Kafka Connect (`value.converter=org.apache.kafka.connect.json.JsonConverter`)
 * work unchanged.
 */
import { definePlugins } from '../api/index.ts';
import { ByteArrayConverter } from './byte-array-converter.ts';
import { JsonConverter, jsonConverterConfigDefs } from './json-converter.ts';
import { StringConverter, stringConverterConfigDefs } from './string-converter.ts';

export type { Converter, SchemaAndValue } from '../api/index.ts';
export { ByteArrayConverter, JsonConverter, StringConverter };

const VERSION = '1.0.0';

export const converterPlugins = definePlugins(
  {
    type: 'converter',
    className: 'connect.converters.JsonConverter',
    aliases: ['org.apache.kafka.connect.json.JsonConverter'],
    version: VERSION,
    doc: "JSON with or without Kafka Connect's schema envelope",
    configDefs: jsonConverterConfigDefs,
    create: () => new JsonConverter(),
  },
  {
    type: 'converter',
    className: 'connect.converters.StringConverter',
    aliases: ['org.apache.kafka.connect.storage.StringConverter'],
    version: VERSION,
    doc: 'Values as text',
    configDefs: stringConverterConfigDefs,
    create: () => new StringConverter(),
  },
  {
    type: 'converter',
    className: 'connect.converters.ByteArrayConverter',
    aliases: ['org.apache.kafka.connect.converters.ByteArrayConverter'],
    version: VERSION,
    doc: 'Bytes passed through unchanged',
    configDefs: [],
    create: () => new ByteArrayConverter(),
  },
);

/**
 * The key, value and header converters of one task. The worker's `key.converter`,
 * `value.converter` and `header.converter` apply unless the connector config names its
 * own; each converter is configured with the `<key|value|header>.converter.*` keys of
 * the config that named it (Kafka Connect's rule: a connector override takes the
 * connector's prefixed keys, the worker default the worker's). Instances belong to one
 * task (converters are not shared between tasks).
 */
import type { Converter } from '../api/converter.ts';
import { ConnectException } from '../api/errors.ts';
import {
  ConverterHeaderConverter,
  type HeaderConverter,
  isSimpleHeaderConverter,
  SimpleHeaderConverter,
} from './header-converter.ts';
import { withPrefix } from './plugin-config.ts';
import type { PluginRegistry } from './plugins.ts';

export interface RecordConverters {
  readonly key: Converter;
  readonly keyClass: string;
  readonly value: Converter;
  readonly valueClass: string;
  readonly header: HeaderConverter;
  readonly headerClass: string;
}

type Which = 'key' | 'value' | 'header';

function chosen(
  which: Which,
  worker: Readonly<Record<string, unknown>>,
  connector: Readonly<Record<string, string>>,
): { className: string; config: Record<string, unknown> } {
  const key = `${which}.converter`;
  const own = connector[key]?.trim();
  const source: Readonly<Record<string, unknown>> = own ? connector : worker;
  const className = String(source[key] ?? '').trim();
  if (className === '')
    throw new ConnectException(`No ${key} is configured for the worker or the connector`);
  return { className, config: withPrefix(source, `${key}.`) };
}

function createConverter(
  plugins: PluginRegistry,
  which: Which,
  className: string,
  config: Record<string, unknown>,
): Converter {
  const manifest = plugins.findOfType(className, 'converter');
  if (manifest === undefined) {
    throw new ConnectException(
      `Invalid value ${className} for configuration ${which}.converter: Class ${className} could not be found.`,
    );
  }
  const converter = manifest.create();
  // Worker properties hold typed values (booleans); converters take Connect's strings.
  const strings = Object.fromEntries(Object.entries(config).map(([k, v]) => [k, String(v)]));
  converter.configure(strings, which === 'key');
  return converter;
}

export function createRecordConverters(
  plugins: PluginRegistry,
  worker: Readonly<Record<string, unknown>>,
  connector: Readonly<Record<string, string>>,
): RecordConverters {
  const key = chosen('key', worker, connector);
  const value = chosen('value', worker, connector);
  const header = chosen('header', worker, connector);
  return {
    key: createConverter(plugins, 'key', key.className, key.config),
    keyClass: key.className,
    value: createConverter(plugins, 'value', value.className, value.config),
    valueClass: value.className,
    header: isSimpleHeaderConverter(header.className)
      ? new SimpleHeaderConverter()
      : new ConverterHeaderConverter(
          createConverter(plugins, 'header', header.className, header.config),
        ),
    headerClass: header.className,
  };
}

export function closeRecordConverters(converters: RecordConverters): void {
  converters.key.close?.();
  converters.value.close?.();
}

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatLoadError, loadConfig } from '../../../src/config/load.ts';
import {
  distributedWorkerDefs,
  workerPassthroughPrefixes,
} from '../../../src/config/worker-config.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';

function propertiesFile(text: string): string {
  const path = join(useTmpDir(), 'worker.properties');
  writeFileSync(path, text);
  return path;
}

const base = {
  defs: distributedWorkerDefs,
  envPrefix: 'CONNECT_',
  passthroughPrefixes: workerPassthroughPrefixes,
};

describe('loadConfig', () => {
  it('lets environment variables override the file and -o override both', () => {
    const file = propertiesFile('rest.port=1001\ngroup.id=from-file\nclient.id=file-client\n');
    const loaded = loadConfig({
      ...base,
      file,
      env: { CONNECT_REST_PORT: '1002', CONNECT_GROUP_ID: 'from-env' },
      options: ['rest.port=1003'],
    });
    expect(loaded.errors).toEqual([]);
    expect(loaded.values['rest.port']).toBe(1003);
    expect(loaded.values['group.id']).toBe('from-env');
    expect(loaded.values['client.id']).toBe('file-client');
    expect(loaded.origins.get('rest.port')).toEqual({ kind: 'option' });
    expect(loaded.origins.get('group.id')).toEqual({ kind: 'env', variable: 'CONNECT_GROUP_ID' });
  });

  it('fills every default when nothing is given', () => {
    const loaded = loadConfig({ ...base, env: {}, options: [] });
    expect(loaded.errors).toEqual([]);
    expect(loaded.values).toMatchObject({
      'bootstrap.servers': [],
      'broker.port': 9092,
      'broker.data.dir': './data/broker',
      'offset.storage.partitions': 25,
      'auto.create.topics.enable': true,
    });
  });

  it('reads .properties escapes, continuations and colon separators', () => {
    const file = propertiesFile(
      '# comment\n! also a comment\nbootstrap.servers = a:9092,\\\n    b:9092\nclient.id: my\\u0020client\n',
    );
    const loaded = loadConfig({ ...base, file, env: {}, options: [] });
    expect(loaded.values['bootstrap.servers']).toEqual(['a:9092', 'b:9092']);
    expect(loaded.values['client.id']).toBe('my client');
  });

  it('keeps the part after the first = of -o as the value', () => {
    const loaded = loadConfig({ ...base, env: {}, options: ['producer.sasl.jaas.config=a=b'] });
    expect(loaded.values['producer.sasl.jaas.config']).toBe('a=b');
  });

  it('warns about unknown keys, naming where they came from, but not passthrough keys', () => {
    const file = propertiesFile('bootstrap.server=localhost:9092\nproducer.acks=all\n');
    const loaded = loadConfig({
      ...base,
      file,
      env: { CONNECT_KEY_CONVERTER_SCHEMAS_REGISTRY_URL: 'http://r' },
      options: ['value.converter.foo=1', 'typo.key=1'],
    });
    expect(loaded.errors).toEqual([]);
    expect(loaded.warnings).toEqual([
      `The configuration 'bootstrap.server' (from ${file}) was supplied but isn't a known config; it is ignored.`,
      "The configuration 'typo.key' (from -o) was supplied but isn't a known config; it is ignored.",
    ]);
  });

  it('reports every bad value with its key, value, expectation and origin', () => {
    const loaded = loadConfig({
      ...base,
      env: { CONNECT_REST_PORT: 'eighty' },
      options: ['connect.protocol=fast', 'broker.port=70000', 'bootstrap.servers=nohostport'],
    });
    expect(loaded.errors.map(formatLoadError)).toEqual([
      `Invalid value for configuration 'bootstrap.servers' (value "nohostport"): contains nohostport; expected host:port entries (from -o)`,
      `Invalid value for configuration 'rest.port' (value "eighty"): expected a whole number (from environment variable CONNECT_REST_PORT)`,
      `Invalid value for configuration 'connect.protocol' (value "fast"): must be one of eager, compatible, sessioned (from -o)`,
      `Invalid value for configuration 'broker.port' (value "70000"): must be between 0 and 65535 (from -o)`,
    ]);
  });

  it('runs cross-key checks once every key is valid on its own', () => {
    const loaded = loadConfig({
      ...base,
      env: {},
      options: ['a=1'],
      crossChecks: (values) =>
        values.a === '1' ? [{ key: 'a', value: '1', message: 'must not be 1' }] : [],
    });
    expect(loaded.errors.map(formatLoadError)).toEqual([
      `Invalid value for configuration 'a' (value "1"): must not be 1 (from -o)`,
    ]);
  });

  it('reports an unreadable file and a malformed -o as errors, not exceptions', () => {
    const loaded = loadConfig({
      ...base,
      file: '/nonexistent/worker.properties',
      env: {},
      options: ['no-equals-sign'],
    });
    expect(loaded.errors.map(formatLoadError)).toEqual([
      'Cannot read config file /nonexistent/worker.properties: no such file',
      'Invalid option -o "no-equals-sign": expected key=value',
    ]);
  });
});

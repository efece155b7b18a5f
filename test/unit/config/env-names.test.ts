import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { envNameToKey, envOverrides, keyToEnvName } from '../../../src/config/env-names.ts';

describe('Confluent-style environment variable names', () => {
  it.each([
    ['BOOTSTRAP_SERVERS', 'bootstrap.servers'],
    ['REST_PORT', 'rest.port'],
    ['CONFIG_STORAGE_REPLICATION_FACTOR', 'config.storage.replication.factor'],
    ['SASL_JAAS__CONFIG', 'sasl.jaas_config'],
    ['FOO___BAR', 'foo-bar'],
  ])('%s names the key %s', (name, key) => {
    expect(envNameToKey(name)).toBe(key);
  });

  it('maps a key back to the variable that sets it', () => {
    expect(keyToEnvName('CONNECT_', 'bootstrap.servers')).toBe('CONNECT_BOOTSTRAP_SERVERS');
    expect(keyToEnvName('BROKER_', 'broker.port')).toBe('BROKER_BROKER_PORT');
    expect(keyToEnvName('CONNECT_', 'sasl.jaas_config')).toBe('CONNECT_SASL_JAAS__CONFIG');
  });

  it('round-trips every key whose separators are single', () => {
    const segment = fc.stringMatching(/^[a-z0-9]{1,8}$/);
    const key = fc
      .tuple(segment, fc.array(fc.tuple(fc.constantFrom('.', '_', '-'), segment), { maxLength: 5 }))
      .map(([first, rest]) => first + rest.map(([sep, s]) => sep + s).join(''));
    fc.assert(
      fc.property(key, (k) => {
        const name = keyToEnvName('CONNECT_', k);
        expect(envNameToKey(name.slice('CONNECT_'.length))).toBe(k);
      }),
    );
  });

  it('takes only variables with the prefix, and not the image-level ones nor CONNECT_FROM_SOURCE', () => {
    const env = {
      CONNECT_REST_PORT: '8084',
      CONNECT_FROM_SOURCE: '1',
      CONNECT_LOG4J_ROOT_LOGLEVEL: 'INFO',
      CONNECT_JMX_PORT: '9999',
      BROKER_BROKER_PORT: '9093',
      PATH: '/usr/bin',
    };
    expect(envOverrides(env, 'CONNECT_')).toEqual([
      { key: 'rest.port', value: '8084', variable: 'CONNECT_REST_PORT' },
    ]);
    expect(envOverrides(env, 'BROKER_')).toEqual([
      { key: 'broker.port', value: '9093', variable: 'BROKER_BROKER_PORT' },
    ]);
  });
});

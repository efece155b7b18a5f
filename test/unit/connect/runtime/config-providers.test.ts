// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config references are written ${provider:path:key}
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigException } from '../../../../src/config/config-def.ts';
import {
  ConfigProviders,
  UnresolvedReference,
} from '../../../../src/connect/runtime/config-providers.ts';
import { useTmpDir } from '../../../helpers/tmp-dir.ts';

const KAFKA = 'org.apache.kafka.common.config.provider.';

function providers(extra: Record<string, unknown> = {}) {
  return ConfigProviders.fromWorkerConfig({
    'config.providers': ['file', 'dir', 'env'],
    'config.providers.file.class': `${KAFKA}FileConfigProvider`,
    'config.providers.dir.class': `${KAFKA}DirectoryConfigProvider`,
    'config.providers.env.class': 'EnvVarConfigProvider',
    ...extra,
  });
}

describe('ConfigProviders', () => {
  it("resolves Kafka's file, directory and environment references, leaving other text alone", () => {
    const dir = useTmpDir();
    writeFileSync(join(dir, 'db.properties'), 'db.password=s3cr\\u00e9t\nuser = admin\n');
    mkdirSync(join(dir, 'secrets'));
    writeFileSync(join(dir, 'secrets', 'token'), 'tok\n');
    process.env.CONFIG_PROVIDERS_TEST_HOST = 'db.internal';

    const resolved = providers().resolve({
      'database.password': `\${file:${dir}/db.properties:db.password}`,
      'database.user': `\${file:${dir}/db.properties:user}`,
      token: `Bearer \${dir:${dir}/secrets:token}`,
      'database.hostname': '${env:CONFIG_PROVIDERS_TEST_HOST}',
      'queue.name': 'cdc-${table}',
    });

    expect(resolved).toEqual({
      'database.password': 's3crét',
      'database.user': 'admin',
      token: 'Bearer tok\n',
      'database.hostname': 'db.internal',
      'queue.name': 'cdc-${table}',
    });
  });

  it('names the key and the reference when a file, a key or a provider is missing', () => {
    const dir = useTmpDir();
    writeFileSync(join(dir, 'db.properties'), 'user=admin\n');
    const p = providers();

    const { errors } = p.tryResolve({
      a: `\${file:${dir}/db.properties:password}`,
      b: `\${file:${dir}/missing.properties:password}`,
      c: '${vault:secret/db:password}',
      d: '${env:CONFIG_PROVIDERS_TEST_SURELY_UNSET}',
      e: 'plain',
    });

    expect(errors.map((e) => [e.key, e.message])).toEqual([
      [
        'a',
        `a: cannot resolve \${file:${dir}/db.properties:password}: ${dir}/db.properties has no key 'password'`,
      ],
      [
        'b',
        `b: cannot resolve \${file:${dir}/missing.properties:password}: could not read ${dir}/missing.properties: ENOENT`,
      ],
      [
        'c',
        "c: cannot resolve ${vault:secret/db:password}: the worker declares no config provider 'vault' (config.providers=file,dir,env; add it with config.providers.vault.class, as in Kafka)",
      ],
      [
        'd',
        'd: cannot resolve ${env:CONFIG_PROVIDERS_TEST_SURELY_UNSET}: the environment has no variable CONFIG_PROVIDERS_TEST_SURELY_UNSET',
      ],
    ]);
    expect(() => p.resolve({ a: '${vault:x:y}' })).toThrow(UnresolvedReference);
  });

  it('keeps file and directory providers inside allowed.paths, and env inside allowlist.pattern', () => {
    const dir = useTmpDir();
    mkdirSync(join(dir, 'allowed'));
    writeFileSync(join(dir, 'allowed', 'a.properties'), 'k=v\n');
    writeFileSync(join(dir, 'outside.properties'), 'k=v\n');
    process.env.CONFIG_PROVIDERS_TEST_OK = 'yes';
    const p = providers({
      'config.providers.file.param.allowed.paths': join(dir, 'allowed'),
      'config.providers.env.param.allowlist.pattern': '^CONFIG_PROVIDERS_TEST_O',
    });

    expect(p.resolve({ k: `\${file:${dir}/allowed/a.properties:k}` })).toEqual({ k: 'v' });
    expect(p.resolve({ k: '${env:CONFIG_PROVIDERS_TEST_OK}' })).toEqual({ k: 'yes' });
    expect(() => p.resolve({ k: `\${file:${dir}/allowed/../outside.properties:k}` })).toThrow(
      /is outside allowed\.paths/,
    );
    expect(() => p.resolve({ k: '${env:HOME}' })).toThrow(/does not match allowlist\.pattern/);
  });

  it('refuses at worker start a provider without a class or with a class it does not have', () => {
    expect(() =>
      ConfigProviders.fromWorkerConfig({
        'config.providers': ['vault', 'file'],
        'config.providers.vault.class': 'com.bettercloud.vault.VaultConfigProvider',
      }),
    ).toThrow(ConfigException);
    expect(
      ConfigProviders.errorsIn({
        'config.providers': ['vault', 'file'],
        'config.providers.vault.class': 'com.bettercloud.vault.VaultConfigProvider',
      }).map((e) => e.key),
    ).toEqual(['config.providers.vault.class', 'config.providers.file.class']);
    expect(ConfigProviders.errorsIn({ 'config.providers': [] })).toEqual([]);
  });

  it('a config with references fails to resolve without providers, naming config.providers', () => {
    expect(() => ConfigProviders.none.resolve({ p: '${file:/x:y}' })).toThrow(
      /declares no config provider 'file' \(config\.providers=;/,
    );
  });

  it('puts the references back into task configs for the keys that held them', () => {
    const raw = { 'database.password': '${file:/s.properties:pw}', 'database.user': 'u', a: 'x' };
    const tasks: Array<Record<string, string>> = [
      { 'database.password': 'pw-value', 'database.user': 'u', task: '0' },
      { task: '1' },
    ];

    expect(ConfigProviders.restoreReferences(raw, tasks)).toEqual([
      { 'database.password': '${file:/s.properties:pw}', 'database.user': 'u', task: '0' },
      { task: '1' },
    ]);
  });
});

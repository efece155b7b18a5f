import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ConnectException,
  DataException,
  definePlugins,
  errorKind,
  loadManifests,
  pluginNames,
  RetriableException,
  Wakeup,
} from '../../../../src/connect/api/index.ts';

const transform = {
  type: 'transformation' as const,
  className: 'com.example.transforms.MaskTransformation',
  aliases: ['Mask'],
  version: '0.1.0',
  configDefs: [],
  create: () => ({ configure() {}, apply: <R>(r: R) => r }),
};

describe('plugin manifests', () => {
  it("answer to the class name, aliases, simple name and simple name without suffix, as Kafka's do", () => {
    expect(pluginNames(transform)).toEqual([
      'com.example.transforms.MaskTransformation',
      'Mask',
      'MaskTransformation',
    ]);
  });

  it("load a plugin folder's default export and reject malformed ones naming the folder", () => {
    expect(loadManifests({ default: definePlugins(transform) }, '/plugins/mask')).toHaveLength(1);
    expect(() => loadManifests({ manifests: [] }, '/plugins/x')).toThrow(
      'Plugin folder /plugins/x: the entry module must default-export an array of plugin manifests',
    );
    expect(() => loadManifests({ default: [{ ...transform, create: undefined }] }, '/p')).toThrow(
      'manifest #0 (com.example.transforms.MaskTransformation) needs create()',
    );
    expect(() => loadManifests({ default: [{ ...transform, type: 'sauce' }] }, '/p')).toThrow(
      /unknown type "sauce"/,
    );
  });
});

describe('a third-party plugin folder', () => {
  it('works as plain JavaScript with no import of ours, through its package.json main', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plugin-'));
    try {
      await writeFile(
        join(dir, 'package.json'),
        JSON.stringify({ type: 'module', main: 'lib/main.js' }),
      );
      await mkdir(join(dir, 'lib'));
      await writeFile(
        join(dir, 'lib', 'main.js'),
        `export default [{ type: 'converter', className: 'com.acme.UpperConverter', version: '2.0',
          configDefs: [], create: () => ({ configure() {},
            fromConnectData: (t, s, v) => Buffer.from(String(v).toUpperCase()),
            toConnectData: (t, b) => ({ schema: null, value: String(b) }) }) }];`,
      );
      const main = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')).main;
      const [manifest] = loadManifests(await import(pathToFileURL(join(dir, main)).href), dir);
      expect(pluginNames(manifest)).toEqual(['com.acme.UpperConverter', 'UpperConverter', 'Upper']);
      const converter = manifest.type === 'converter' ? manifest.create() : null;
      expect(converter?.fromConnectData('t', null, 'abc')).toEqual(Buffer.from('ABC'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('errors', () => {
  it('carry a kind the runtime switches on', () => {
    expect(errorKind(new RetriableException('later'))).toBe('retriable');
    expect(errorKind(new DataException('bad'))).toBe('data');
    expect(errorKind(new ConnectException('fatal'))).toBe('connect');
    expect(errorKind(new Error('plain'))).toBe('connect');
    expect(new DataException('bad')).toBeInstanceOf(ConnectException);
  });
});

describe('Wakeup', () => {
  it('ends a wait at once when woken, and remembers a wake that came first', async () => {
    const w = new Wakeup();
    const waiting = w.wait(60_000);
    w.wake();
    await waiting;
    w.wake();
    await w.wait(60_000);
  });
});

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadPlugins } from '../../../../src/connect/runtime/plugins.ts';
import { useTmpDir } from '../../../helpers/tmp-dir.ts';
import { fileConnectorFolder } from '../rest/rest-fixture.ts';

const logger = pino({ level: 'silent' });

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

/** A third party's TypeScript plugin: its own copy of the types, no import from us. */
const typescriptPlugin = `
interface Def { name: string; type: 'string'; doc: string; default?: string | null }
const defs: Def[] = [{ name: 'greeting', type: 'string', doc: 'What to say.', default: 'hi' }];
export default [
  {
    type: 'source' as const,
    className: 'com.example.HelloSourceConnector',
    aliases: ['com.legacy.Hello'],
    version: '2.0.0',
    configDefs: defs,
    createConnector: () => ({ version: () => '2.0.0', start() {}, taskConfigs: () => [], stop() {} }),
    createTask: () => ({}),
  },
];
`;

const javascriptPlugin = `
export default [
  {
    type: 'transformation',
    className: 'com.example.Upper',
    version: '0.1.0',
    configDefs: [],
    create: () => ({ configure() {}, apply: (r) => r }),
  },
];
`;

describe('loadPlugins', () => {
  it('loads TypeScript and JavaScript plugin folders from a plugin.path folder of folders', async () => {
    const root = useTmpDir();
    write(join(root, 'hello-ts', 'index.ts'), typescriptPlugin);
    write(
      join(root, 'upper-js', 'package.json'),
      JSON.stringify({ type: 'module', main: 'lib/main.js' }),
    );
    write(join(root, 'upper-js', 'lib', 'main.js'), javascriptPlugin);
    mkdirSync(join(root, 'not-a-plugin'));

    const registry = await loadPlugins({ pluginPath: [root], logger });

    expect(registry.problems).toEqual([]);
    const hello = registry.find('com.legacy.Hello');
    expect(hello?.manifest.className).toBe('com.example.HelloSourceConnector');
    expect(hello?.location).toBe(join(root, 'hello-ts'));
    expect(registry.find('HelloSource')).toBe(hello);
    expect(registry.findOfType('Upper', 'transformation')?.className).toBe('com.example.Upper');
    expect(registry.list(true)).toEqual([
      { class: 'com.example.HelloSourceConnector', type: 'source', version: '2.0.0' },
    ]);
  });

  it('accepts a listed folder that is itself a plugin folder, and registers the built-ins', async () => {
    const registry = await loadPlugins({ pluginPath: [fileConnectorFolder], logger });
    expect(registry.problems).toEqual([]);
    expect(registry.findOfType('FileStreamSink', 'sink')?.className).toBe(
      'connect.file.FileStreamSinkConnector',
    );
    expect(
      registry.findOfType('org.apache.kafka.connect.storage.StringConverter', 'converter'),
    ).toBeDefined();
    expect(
      registry.findOfType('org.apache.kafka.connect.transforms.RegexRouter', 'transformation'),
    ).toBeDefined();
  });

  it('logs and skips broken folders, loading the others', async () => {
    const root = useTmpDir();
    write(join(root, 'a-throws', 'index.js'), 'throw new Error("cannot start");\n');
    write(join(root, 'b-bad-export', 'index.js'), 'export default { not: "an array" };\n');
    write(
      join(root, 'c-bad-manifest', 'index.js'),
      'export default [{ className: "X", version: "1", configDefs: [], type: "sink" }];\n',
    );
    write(join(root, 'd-syntax', 'index.ts'), 'export default [ this is not code\n');
    write(join(root, 'e-missing-main', 'package.json'), JSON.stringify({ main: 'gone.js' }));
    write(join(root, 'f-good', 'index.js'), javascriptPlugin);
    // Claims a name the file plugin already holds: the whole folder is skipped.
    write(
      join(root, 'g-clash', 'index.js'),
      javascriptPlugin.replace(
        'com.example.Upper',
        'org.apache.kafka.connect.transforms.RegexRouter',
      ),
    );

    const registry = await loadPlugins({ pluginPath: [root, join(root, 'nowhere')], logger });

    const problems = Object.fromEntries(
      registry.problems.map((p) => [p.folder.slice(root.length + 1), p.error]),
    );
    expect(Object.keys(problems).sort()).toEqual([
      'a-throws',
      'b-bad-export',
      'c-bad-manifest',
      'd-syntax',
      'e-missing-main',
      'g-clash',
      'nowhere',
    ]);
    expect(problems['a-throws']).toContain('cannot start');
    expect(problems['b-bad-export']).toContain('must default-export an array of plugin manifests');
    expect(problems['c-bad-manifest']).toContain('needs createConnector() and createTask()');
    expect(problems['e-missing-main']).toContain('package.json main gone.js does not exist');
    expect(problems['g-clash']).toContain(
      'already used by connect.transforms.RegexRouter (builtin)',
    );
    expect(problems.nowhere).toBe('not a directory');
    expect(registry.find('com.example.Upper')).toBeDefined();
  });
});

/**
 * The `connect` command runs the compiled build (scripts/build.mjs -> dist/) while it is
 * newer than every source, and the TypeScript sources through tsx once a source is
 * newer. Built here in a copy of the repository, so the test neither depends on nor
 * disturbs the repository's own dist/. In both modes the bundled file connector copies
 * lines (in compiled mode from its compiled twin, with the broker thread started on
 * compiled code) and a third party's TypeScript plugin, outside the build, loads.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildIsFresh } from '../../../bin/build-freshness.js';
import { repoRoot, useConnect } from '../../helpers/processes.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { fileLines, waitFor } from './standalone-helpers.ts';

/** A copy of the repository's sources and build inputs, sharing its node_modules. */
function copyRepository(root: string): void {
  for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(join(repoRoot, f), join(root, f));
  }
  for (const d of ['bin', 'scripts', 'src', 'connectors', 'ui']) {
    cpSync(join(repoRoot, d), join(root, d), {
      recursive: true,
      filter: (path) => !path.includes('/node_modules'),
    });
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
}

/**
 * A third party's TypeScript plugin: a transformation, with no import from us and no
 * package.json, so it loads as CommonJS.
 */
const typescriptPlugin = `
const upper: 'transformation' = 'transformation';
export default [
  {
    type: upper,
    className: 'com.example.Upper',
    version: '0.1.0',
    configDefs: [],
    create: () => ({ configure() {}, apply: (r: unknown) => r, close() {} }),
  },
];
`;

describe('connect runs its compiled build while it is fresh', () => {
  it('uses dist/ after a build and the sources once one is edited', async () => {
    const dir = useTmpDir();
    const root = join(dir, 'repo');
    copyRepository(root);
    const build = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], {
      encoding: 'utf8',
    });
    expect(build.status, `${build.stdout}${build.stderr}`).toBe(0);
    expect(buildIsFresh(root)).toBe(true);

    const plugin = join(dir, 'plugins', 'upper');
    mkdirSync(plugin, { recursive: true });
    writeFileSync(join(plugin, 'index.ts'), typescriptPlugin);
    const input = join(dir, 'input.txt');
    const output = join(dir, 'output.txt');
    const properties = join(dir, 'worker.properties');
    writeFileSync(
      properties,
      [
        'bootstrap.servers=',
        'broker.host=127.0.0.1',
        'broker.port=0',
        `broker.data.dir=${join(dir, 'broker')}`,
        'listeners=http://127.0.0.1:0',
        `plugin.path=${join(root, 'connectors/file')},${join(dir, 'plugins')}`,
        `offset.storage.file.filename=${join(dir, 'connect.offsets')}`,
        'offset.flush.interval.ms=200',
        'key.converter=org.apache.kafka.connect.storage.StringConverter',
        'value.converter=org.apache.kafka.connect.storage.StringConverter',
        '',
      ].join('\n'),
    );
    const connector = (name: string) => {
      const path = join(dir, `${name}.json`);
      writeFileSync(
        path,
        JSON.stringify({
          name,
          config: {
            'connector.class': 'FileStreamSink',
            file: output,
            topics: 'lines',
            transforms: 'u',
            'transforms.u.type': 'com.example.Upper',
          },
        }),
      );
      const source = join(dir, `${name}-source.json`);
      writeFileSync(
        source,
        JSON.stringify({
          name: `${name}-source`,
          config: { 'connector.class': 'FileStreamSource', file: input, topic: 'lines' },
        }),
      );
      return [source, path];
    };
    const bin = join(root, 'bin/connect.js');

    // Runs the same command until `lines` lines are copied; returns its plugin log lines.
    const run = async (lines: number) => {
      const p = useConnect(['standalone', properties, ...connector('a')], {
        env: { CONNECT_FROM_SOURCE: undefined },
        bin,
      });
      await waitFor(`${lines} lines copied`, () => {
        if (fileLines(output).length >= lines) return true;
        if (p.child.exitCode !== null) throw new Error(p.output().join('\n'));
      });
      return { p, loaded: p.output().filter((l) => l.includes('plugin(s) from')) };
    };

    writeFileSync(input, 'one\ntwo\n');
    const { p: compiled, loaded } = await run(2);
    expect(loaded.some((l) => l.includes(join(root, 'dist/connectors/file/index.js')))).toBe(true);
    expect(loaded.some((l) => l.includes(join(plugin, 'index.ts')))).toBe(true);
    compiled.signal('SIGTERM');
    expect((await compiled.exited).code).toBe(0);

    // A source newer than the build: the same command now runs the sources.
    const now = Date.now() / 1000 + 5;
    utimesSync(join(root, 'src/cli.ts'), now, now);
    expect(buildIsFresh(root)).toBe(false);
    writeFileSync(input, 'one\ntwo\nthree\n');
    const { loaded: again } = await run(3);
    expect(again.some((l) => l.includes(join(root, 'connectors/file/index.ts')))).toBe(true);
    expect(again.some((l) => l.includes('dist/'))).toBe(false);
  }, 120_000);
});

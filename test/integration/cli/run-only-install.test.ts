/**
 * A run-only install, as README gives it (`npm ci --omit=dev`): the repository's files in
 * a fresh folder with only the packages such an install has (the tree `npm ls
 * --omit=dev` reports, hard-linked from the suite's own install: a real `npm ci --omit=dev`
 * would build the native codecs again and take minutes), then `connect standalone`
 * copies a file through the embedded broker with the file connectors. Nothing of
 * TypeScript, vitest or the build tools is there: the sources run through tsx.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it, onTestFailed } from 'vitest';
import { repoRoot, useConnect } from '../../helpers/processes.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { waitFor } from '../../helpers/wait.ts';

describe('npm ci --omit=dev', () => {
  it('installs what a worker needs to run a pipeline', async () => {
    const dir = useTmpDir();
    const app = join(dir, 'app');
    for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'])
      cpSync(join(repoRoot, f), join(app, f));
    for (const d of ['bin', 'src', 'connectors', 'scripts', 'config', 'ui'])
      cpSync(join(repoRoot, d), join(app, d), {
        recursive: true,
        filter: (p) => !p.includes('/node_modules') && !p.includes('/test/'),
      });
    const modules = join(repoRoot, 'node_modules');
    const production = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((p) => p.startsWith(`${modules}/`))
      .map((p) => relative(modules, p))
      // A package's own node_modules holds only its dependencies: copied with it.
      .filter((rel) => !rel.includes('/node_modules/'));
    // Hard links (cp -al): the same files, in seconds; a plain copy across file systems.
    mkdirSync(join(app, 'node_modules'), { recursive: true });
    const copy = (mode: string) =>
      execFileSync('cp', [mode, '--parents', ...production, join(app, 'node_modules')], {
        cwd: modules,
        stdio: 'pipe',
      });
    try {
      copy('-al');
    } catch {
      copy('-a');
    }
    expect(existsSync(join(app, 'node_modules', 'vitest'))).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'typescript'))).toBe(false);

    const input = join(dir, 'in.txt');
    const output = join(dir, 'out.txt');
    writeFileSync(input, 'one\ntwo\nthree\n');
    writeFileSync(
      join(dir, 'worker.properties'),
      [
        'bootstrap.servers=',
        'broker.port=0',
        `broker.data.dir=${join(dir, 'broker')}`,
        'listeners=http://127.0.0.1:0',
        'group.initial.rebalance.delay.ms=0',
        `plugin.path=${join(app, 'connectors', 'file')}`,
        `offset.storage.file.filename=${join(dir, 'offsets')}`,
        'key.converter=org.apache.kafka.connect.storage.StringConverter',
        'value.converter=org.apache.kafka.connect.storage.StringConverter',
      ].join('\n'),
    );
    const connector = (name: string, config: Record<string, string>) => {
      const path = join(dir, `${name}.json`);
      writeFileSync(path, JSON.stringify({ name, config }));
      return path;
    };
    const p = useConnect(
      [
        'standalone',
        join(dir, 'worker.properties'),
        connector('src', { 'connector.class': 'FileStreamSource', file: input, topic: 'lines' }),
        connector('sink', { 'connector.class': 'FileStreamSink', file: output, topics: 'lines' }),
      ],
      { bin: join(app, 'bin', 'connect.js'), cwd: app },
    );

    onTestFailed(() => console.error(p.output().slice(0, 30).join('\n')));
    await waitFor(
      'the three lines copied',
      () =>
        existsSync(output) && readFileSync(output, 'utf8') === 'one\ntwo\nthree\n'
          ? true
          : undefined,
      60_000,
    );
    expect(p.output().join('\n')).not.toMatch(/Cannot find (module|package)/);
  }, 120_000);
});

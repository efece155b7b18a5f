/**
 * `connect standalone worker.properties source.json sink.json` as a user runs it: the
 * embedded broker starts in the same process (bootstrap.servers empty), the file pair
 * copies lines, SIGTERM stops it cleanly (exit 0) and a restart continues exactly where
 * it stopped; after SIGKILL a restart loses no line (records not yet committed are
 * delivered again: at-least-once).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useConnect } from '../../helpers/processes.ts';
import { useTmpDir } from '../../helpers/tmp-dir.ts';
import { fileLines, testPluginPath, waitFor } from './standalone-helpers.ts';

function lines(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);
}

function setUp(dir: string) {
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
      'offsets.topic.num.partitions=4',
      'group.initial.rebalance.delay.ms=0',
      'listeners=http://127.0.0.1:0',
      `plugin.path=${testPluginPath}`,
      `offset.storage.file.filename=${join(dir, 'connect.offsets')}`,
      'offset.flush.interval.ms=200',
      'key.converter=org.apache.kafka.connect.storage.StringConverter',
      'value.converter=org.apache.kafka.connect.storage.StringConverter',
      '',
    ].join('\n'),
  );
  const source = join(dir, 'source.json');
  writeFileSync(
    source,
    JSON.stringify({
      name: 'file-source',
      config: { 'connector.class': 'FileStreamSource', file: input, topic: 'lines' },
    }),
  );
  const sink = join(dir, 'sink.json');
  writeFileSync(
    sink,
    JSON.stringify({
      name: 'file-sink',
      config: { 'connector.class': 'FileStreamSink', file: output, topics: 'lines' },
    }),
  );
  return { input, output, args: ['standalone', properties, source, sink] };
}

describe('connect standalone (child process, embedded broker)', () => {
  it('copies lines, stops cleanly on SIGTERM and resumes without a duplicate', async () => {
    const dir = useTmpDir();
    const { input, output, args } = setUp(dir);
    writeFileSync(input, `${lines(1, 20).join('\n')}\n`);
    const first = useConnect(args, { killGraceMs: 20_000 });
    await first.waitForLine(
      /standalone worker running .*REST API on http:\/\/127\.0\.0\.1:\d+/,
      60_000,
    );
    await waitFor('20 lines copied', () => (fileLines(output).length >= 20 ? true : undefined));
    first.signal('SIGTERM');
    expect((await first.exited).code).toBe(0);

    appendFileSync(input, `${lines(21, 30).join('\n')}\n`);
    const second = useConnect(args, { killGraceMs: 20_000 });
    await waitFor(
      '30 lines copied',
      () => (fileLines(output).length >= 30 ? true : undefined),
      60_000,
    );
    second.signal('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(fileLines(output)).toEqual(lines(1, 30));
  });

  it('loses no line when killed with SIGKILL and restarted', async () => {
    const dir = useTmpDir();
    const { input, output, args } = setUp(dir);
    writeFileSync(input, `${lines(1, 20).join('\n')}\n`);
    const first = useConnect(args, { killGraceMs: 20_000 });
    await waitFor(
      '20 lines copied',
      () => (fileLines(output).length >= 20 ? true : undefined),
      60_000,
    );
    appendFileSync(input, `${lines(21, 40).join('\n')}\n`);
    first.signal('SIGKILL');
    await first.exited;

    const second = useConnect(args, { killGraceMs: 20_000 });
    await waitFor(
      'every line copied at least once',
      () => {
        const seen = new Set(fileLines(output));
        return lines(1, 40).every((l) => seen.has(l)) ? true : undefined;
      },
      60_000,
    );
    second.signal('SIGTERM');
    expect((await second.exited).code).toBe(0);
    // Order is kept within what was delivered; duplicates may only repeat a suffix.
    expect(fileLines(output).slice(0, 20)).toEqual(lines(1, 20));
  });
});

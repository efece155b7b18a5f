/**
 * Running kcat (librdkafka's command-line client, Debian package `kcat`) against a
 * broker. A missing kcat fails the test with how to install it.
 */
import { execFileSync, spawn } from 'node:child_process';

let checked = false;

function requireKcat(): void {
  if (checked) return;
  try {
    execFileSync('kcat', ['-V'], { stdio: 'ignore' });
  } catch {
    throw new Error('kcat is not installed: `apt-get install kcat` (Debian) provides it.');
  }
  checked = true;
}

export interface KcatResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs kcat with `args`, feeding `input` on stdin; rejects on a non-zero exit. */
export function kcat(
  args: string[],
  input?: string | Buffer,
  timeoutMs = 60_000,
): Promise<KcatResult> {
  requireKcat();
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      const result = {
        code,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
      };
      if (code === 0) resolve(result);
      else reject(new Error(`kcat ${args.join(' ')} exited with ${code}: ${result.stderr}`));
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}

/** Every record of `topic` from the beginning, as `partition offset key value` tuples. */
export async function consumeAll(
  bootstrap: string,
  topic: string,
  extra: string[] = [],
): Promise<Array<{ partition: number; offset: number; key: string | null; value: string | null }>> {
  const { stdout } = await kcat([
    '-b',
    bootstrap,
    '-C',
    '-t',
    topic,
    '-o',
    'beginning',
    '-e',
    '-q',
    '-X',
    'fetch.wait.max.ms=20',
    '-f',
    '%p\\t%o\\t%K\\t%S\\t%s\\t%k\\n',
    ...extra,
  ]);
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [p, o, keyLen, valueLen, value, key] = l.split('\t');
      return {
        partition: Number(p),
        offset: Number(o),
        key: keyLen === '-1' ? null : key!,
        value: valueLen === '-1' ? null : value!,
      };
    });
}

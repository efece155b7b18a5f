/**
 * s3rver in a process of its own, for the end-to-end bench: a real S3 is not in the
 * worker's process, and s3rver in the bench's own event loop took main-thread time
 * from the sink it measures. Prints one JSON line ({ endpoint, region, credentials,
 * directory }) once it listens, and stops (deleting its folder) when stdin closes.
 *
 * Run by end-to-end.ts: npx tsx bench/parquet-sink/s3rver-process.ts <bucket>...
 */
import { startS3 } from '../../test/helpers/s3.ts';

const s3 = await startS3({ buckets: process.argv.slice(2) });
const { endpoint, region, credentials, directory } = s3;
process.stdout.write(`${JSON.stringify({ endpoint, region, credentials, directory })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void s3.stop().finally(() => process.exit(0));
});

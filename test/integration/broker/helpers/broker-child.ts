/**
 * The embedded broker alone as a child process, for crash tests that kill it with
 * SIGKILL: `node --import tsx broker-child.ts <dataDir> <config JSON>`. It runs the
 * same startBroker() as `connect broker`, without loading the rest of the CLI (the
 * worker, REST, connectors), which on a loaded machine makes it start in a third of
 * the time. It prints `broker listening on 127.0.0.1:<port>` once it accepts
 * connections, and runs until killed (SIGTERM stops it cleanly).
 */
import { startBroker } from '../../../../src/broker/broker.ts';

const [dataDir, configJson] = process.argv.slice(2);
if (dataDir === undefined) throw new Error('usage: broker-child.ts <dataDir> [config JSON]');
const broker = await startBroker({
  host: '127.0.0.1',
  port: 0,
  dataDir,
  nodeId: 1,
  config: JSON.parse(configJson ?? '{}'),
});
process.stdout.write(`broker listening on ${broker.host}:${broker.port}\n`);
process.once('SIGTERM', () => {
  void broker.stop().then(() => process.exit(0));
});

/**
 * A synchronous Redis reachability check for /config/validate.
 *
 * The connector API's `validate` hook is synchronous, yet an unreachable Redis or a
 * refused password must fail validation, not a task later. So the check runs on a
 * short-lived worker thread (plain JavaScript, no imports of ours: it starts without
 * tsx) that connects, authenticates, selects the database and PINGs, while this
 * thread waits on a SharedArrayBuffer with Atomics.wait, bounded by PROBE_TIMEOUT_MS.
 * The caller's event loop is blocked for that long at most; a reachable Redis answers
 * in a few milliseconds plus the thread's start (about 30 ms).
 */
import { Worker } from 'node:worker_threads';
import type { RedisSettings } from './redis-settings.ts';

/** Long enough for a TLS handshake to a remote Redis, short enough for a REST call. */
export const PROBE_TIMEOUT_MS = 3000;

const PROBE_SOURCE = `
const { workerData } = require('node:worker_threads');
const net = require('node:net');
const tls = require('node:tls');
const { s, state, message } = workerData;
const flag = new Int32Array(state);
function done(code, text) {
  const bytes = Buffer.from(String(text).slice(0, 400), 'utf8');
  const view = new Uint8Array(message);
  view.set(bytes.subarray(0, view.length - 4), 4);
  new DataView(message).setUint32(0, Math.min(bytes.length, view.length - 4));
  Atomics.store(flag, 0, code);
  Atomics.notify(flag, 0);
  try { socket.destroy(); } catch {}
  process.exit(0);
}
const cmd = (...a) => '*' + a.length + '\\r\\n' + a.map((x) => '$' + Buffer.byteLength(String(x)) + '\\r\\n' + x + '\\r\\n').join('');
const commands = [];
if (s.password) commands.push(s.username ? cmd('AUTH', s.username, s.password) : cmd('AUTH', s.password));
if (s.db) commands.push(cmd('SELECT', s.db));
commands.push(cmd('PING'));
const opts = { host: s.host, port: s.port };
const socket = s.tls ? tls.connect({ ...opts, servername: s.host }) : net.connect(opts);
socket.setTimeout(${PROBE_TIMEOUT_MS - 200});
socket.once(s.tls ? 'secureConnect' : 'connect', () => socket.write(commands.join('')));
let buffer = '';
let replies = 0;
socket.on('data', (d) => {
  buffer += d.toString('utf8');
  let nl;
  while ((nl = buffer.indexOf('\\r\\n')) >= 0) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 2);
    if (line.startsWith('-')) return done(2, line.slice(1));
    replies++;
    if (replies === commands.length) return done(1, line);
  }
});
socket.once('timeout', () => done(2, 'no answer within ${PROBE_TIMEOUT_MS - 200} ms'));
socket.once('error', (e) => done(2, e.code ? e.code + ' ' + e.message : e.message));
`;

/** undefined when Redis answered PING as configured; otherwise what went wrong. */
export function probeRedis(s: RedisSettings): string | undefined {
  const state = new SharedArrayBuffer(4);
  const message = new SharedArrayBuffer(512);
  const flag = new Int32Array(state);
  const worker = new Worker(PROBE_SOURCE, {
    eval: true,
    workerData: { s, state, message },
  });
  worker.unref();
  const waited = Atomics.wait(flag, 0, 0, PROBE_TIMEOUT_MS);
  const code = Atomics.load(flag, 0);
  if (waited === 'timed-out' || code === 0) {
    void worker.terminate();
    return `no answer within ${PROBE_TIMEOUT_MS} ms`;
  }
  const length = new DataView(message).getUint32(0);
  const text = Buffer.from(new Uint8Array(message, 4, length)).toString('utf8');
  return code === 1 ? undefined : text;
}

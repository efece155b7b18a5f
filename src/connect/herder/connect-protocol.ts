/**
 * The `connect` group protocol's member metadata and assignment bytes, as Kafka
 * Connect's ConnectProtocol (eager, protocol name "default", version 0) and
 * IncrementalCooperativeConnectProtocol ("compatible" version 1, "sessioned"
 * version 2) write them. The broker treats both as opaque bytes; Java workers and
 * this runtime must read each other's, so the layouts below are byte-for-byte those
 * of Kafka's `Schema` types (big-endian, STRING = int16 length + UTF-8, ARRAY =
 * int32 count, -1 for null, NULLABLE_BYTES = int32 length, -1 for null):
 *
 *   metadata v0          version i16 · url STRING · config-offset i64
 *   metadata v1/v2       version i16 · url STRING · config-offset i64 ·
 *                        allocation NULLABLE_BYTES (the member's current assignment,
 *                        encoded as an assignment v1/v2 below; null when empty)
 *   assignment v0        version i16 · error i16 · leader STRING · leader-url STRING ·
 *                        config-offset i64 · assignment [connector STRING · tasks [i32]]
 *   assignment v1/v2     the v0 fields, then revoked [connector STRING · tasks [i32]] ·
 *                        delay i32; both arrays nullable
 *
 * In the per-connector task lists, task id -1 (CONNECTOR_TASK) stands for the
 * connector instance itself. Versions 1 and 2 have the same layout; version 2 only
 * says that the sender verifies internal REST requests with session keys (KIP-507).
 *
 * Decoding follows Kafka's tolerance rules: a version below 0 is refused, a higher
 * version is read with the newest layout known (extra trailing bytes ignored), and
 * missing trailing v1 fields take their defaults (allocation null, arrays null,
 * delay 0) as Connect's TOLERATE_MISSING_FIELDS_WITH_DEFAULTS does.
 *
 * Pure functions, no state; used by worker-group-member.ts.
 */
import { Reader } from '../../protocol/reader.ts';
import { Writer } from '../../protocol/writer.ts';
import type { ConnectorTaskId } from './herder.ts';

export const CONNECT_PROTOCOL_V0 = 0;
export const CONNECT_PROTOCOL_V1 = 1;
export const CONNECT_PROTOCOL_V2 = 2;
/** The task id that means "the connector instance" in assignment task lists. */
export const CONNECTOR_TASK = -1;

/** Kafka Connect's `connect.protocol` modes and their group protocol names. */
export type ConnectProtocolMode = 'eager' | 'compatible' | 'sessioned';
export const PROTOCOL_NAMES = {
  eager: 'default',
  compatible: 'compatible',
  sessioned: 'sessioned',
} as const satisfies Record<ConnectProtocolMode, string>;

/** Assignment error codes (ConnectProtocol.Assignment). */
export const ASSIGNMENT_NO_ERROR = 0;
/** The leader could not read the config topic up to the members' offsets; re-read and rejoin. */
export const ASSIGNMENT_CONFIG_MISMATCH = 1;

/** What a worker tells the group when it joins. */
export interface WorkerMetadata {
  version: number;
  /** The worker's advertised REST URL. */
  url: string;
  /** Offset of the config topic this worker has read up to (-1: nothing yet). */
  configOffset: number;
  /** v1+: what the worker runs now (null: nothing, or v0). */
  allocation: ConnectAssignment | null;
}

/** The leader's answer for one member. v0 assignments carry no revocations and no delay. */
export interface ConnectAssignment {
  version: number;
  error: number;
  leader: string;
  leaderUrl: string;
  configOffset: number;
  connectors: string[];
  tasks: ConnectorTaskId[];
  revokedConnectors: string[];
  revokedTasks: ConnectorTaskId[];
  /** ms after which the member should rejoin (a scheduled rebalance); 0: none. */
  delay: number;
}

export class ConnectProtocolError extends Error {
  readonly kind = 'connect-protocol';
  constructor(message: string) {
    super(message);
    this.name = 'ConnectProtocolError';
  }
}

export function protocolVersionOf(name: string): number | undefined {
  if (name === PROTOCOL_NAMES.eager) return CONNECT_PROTOCOL_V0;
  if (name === PROTOCOL_NAMES.compatible) return CONNECT_PROTOCOL_V1;
  if (name === PROTOCOL_NAMES.sessioned) return CONNECT_PROTOCOL_V2;
  return undefined;
}

/**
 * The JoinGroup protocol list of a worker in `mode`, most preferred first, as
 * Connect's metadataRequest builds it: a sessioned worker also offers compatible and
 * default, a compatible worker also offers default, so mixed clusters agree on the
 * newest protocol every member speaks.
 */
export function joinProtocols(
  mode: ConnectProtocolMode,
  state: { url: string; configOffset: number; allocation: ConnectAssignment | null },
): Array<{ name: string; metadata: Buffer }> {
  const list: Array<{ name: string; metadata: Buffer }> = [];
  const v0 = { ...state, version: CONNECT_PROTOCOL_V0, allocation: null };
  if (mode === 'sessioned') {
    list.push({
      name: PROTOCOL_NAMES.sessioned,
      metadata: encodeMetadata({ ...state, version: CONNECT_PROTOCOL_V2 }),
    });
  }
  if (mode !== 'eager') {
    list.push({
      name: PROTOCOL_NAMES.compatible,
      metadata: encodeMetadata({ ...state, version: CONNECT_PROTOCOL_V1 }),
    });
  }
  list.push({ name: PROTOCOL_NAMES.eager, metadata: encodeMetadata(v0) });
  return list;
}

export function encodeMetadata(m: WorkerMetadata): Buffer {
  const w = new Writer(64);
  w.int16(m.version);
  w.string(m.url);
  w.int64(BigInt(m.configOffset));
  if (m.version >= CONNECT_PROTOCOL_V1) {
    w.nullableBytes(m.allocation === null ? null : encodeAssignment(m.allocation, m.version));
  }
  return Buffer.from(w.finish());
}

export function decodeMetadata(buf: Buffer): WorkerMetadata {
  const r = new Reader(buf);
  const version = readVersion(r);
  const url = r.string();
  const configOffset = Number(r.int64());
  let allocation: ConnectAssignment | null = null;
  if (version >= CONNECT_PROTOCOL_V1 && r.remaining > 0) {
    const bytes = r.nullableBytes();
    if (bytes !== null && r.ok) allocation = decodeAssignment(bytes);
  }
  check(r, 'worker metadata');
  return { version, url, configOffset, allocation };
}

/**
 * Encodes at `version` (default: the assignment's own). An empty, error-free v1+
 * assignment is still encoded: callers wanting Connect's "null allocation" for an
 * empty one pass null to encodeMetadata instead.
 */
export function encodeAssignment(a: ConnectAssignment, version = a.version): Buffer {
  const w = new Writer(128);
  w.int16(version);
  w.int16(a.error);
  w.string(a.leader);
  w.string(a.leaderUrl);
  w.int64(BigInt(a.configOffset));
  writeConnectorTasks(w, a.connectors, a.tasks);
  if (version >= CONNECT_PROTOCOL_V1) {
    writeConnectorTasks(w, a.revokedConnectors, a.revokedTasks);
    w.int32(a.delay);
  }
  return Buffer.from(w.finish());
}

export function decodeAssignment(buf: Buffer): ConnectAssignment {
  const r = new Reader(buf);
  const version = readVersion(r);
  const error = r.int16();
  const leader = r.string();
  const leaderUrl = r.string();
  const configOffset = Number(r.int64());
  const assigned = readConnectorTasks(r);
  let revoked = { connectors: [] as string[], tasks: [] as ConnectorTaskId[] };
  let delay = 0;
  if (version >= CONNECT_PROTOCOL_V1) {
    if (r.remaining > 0) revoked = readConnectorTasks(r);
    if (r.remaining > 0) delay = r.int32();
  }
  check(r, 'assignment');
  return {
    version,
    error,
    leader,
    leaderUrl,
    configOffset,
    connectors: assigned.connectors,
    tasks: assigned.tasks,
    revokedConnectors: revoked.connectors,
    revokedTasks: revoked.tasks,
    delay,
  };
}

/** An assignment with nothing in it, as a member holds before its first generation. */
export function emptyAssignment(version: number): ConnectAssignment {
  return {
    version,
    error: ASSIGNMENT_NO_ERROR,
    leader: '',
    leaderUrl: '',
    configOffset: -1,
    connectors: [],
    tasks: [],
    revokedConnectors: [],
    revokedTasks: [],
    delay: 0,
  };
}

function readVersion(r: Reader): number {
  const version = r.int16();
  if (r.ok && version < CONNECT_PROTOCOL_V0) {
    throw new ConnectProtocolError(`Unsupported subscription version: ${version}`);
  }
  return version;
}

function check(r: Reader, what: string): void {
  if (!r.ok) throw new ConnectProtocolError(`malformed connect ${what}: ${r.failure}`);
}

/** Groups by connector in first-seen order: the connector's -1 entry first, then its tasks. */
function writeConnectorTasks(w: Writer, connectors: string[], tasks: ConnectorTaskId[]): void {
  const byConnector = new Map<string, number[]>();
  for (const c of new Set(connectors)) byConnector.set(c, [CONNECTOR_TASK]);
  for (const t of tasks) {
    const list = byConnector.get(t.connector);
    if (list) list.push(t.task);
    else byConnector.set(t.connector, [t.task]);
  }
  w.arrayLength(false, byConnector.size);
  for (const [connector, ids] of byConnector) {
    w.string(connector);
    w.arrayLength(false, ids.length);
    for (const id of ids) w.int32(id);
  }
}

function readConnectorTasks(r: Reader): { connectors: string[]; tasks: ConnectorTaskId[] } {
  const connectors: string[] = [];
  const tasks: ConnectorTaskId[] = [];
  // Smallest entry: an empty name (2 bytes) and an empty task list (4 bytes).
  const n = r.arrayLength(false, 6);
  for (let i = 0; i < n; i++) {
    const connector = r.string();
    const m = r.arrayLength(false, 4);
    for (let j = 0; j < m; j++) {
      const id = r.int32();
      if (id === CONNECTOR_TASK) connectors.push(connector);
      else tasks.push({ connector, task: id });
    }
  }
  return { connectors, tasks };
}

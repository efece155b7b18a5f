/**
 * REST Basic authentication as Kafka Connect's BasicAuthSecurityRestExtension does it,
 * read from the same files, so a secured worker moves over with its config:
 *
 *   rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
 *   KAFKA_OPTS=-Djava.security.auth.login.config=/etc/kafka/connect_jaas.conf
 *
 * The JAAS file's `KafkaConnect` entry names PropertyFileLoginModule with
 * `file="<credentials>"`, a .properties file of `user=password` lines. The worker key
 * `java.security.auth.login.config` may name the JAAS file instead of KAFKA_OPTS (and
 * wins). Every request must then carry `Authorization: Basic base64(user:password)`
 * matching a line of the file, else it is answered 401 with "User cannot access the
 * resource." (Kafka's text, in Connect's error body). As in Kafka:
 *   - PUT /connectors/{name}/fence, which a follower sends the leader before an
 *     exactly-once task starts, is let through without credentials;
 *   - an empty credentials file lets every request in (logged as a warning at start).
 * CORS preflights (OPTIONS, answered before this check) carry no credentials in any
 * browser and are let through as well.
 *
 * Anything else in rest.extension.classes is a Java class this runtime cannot load, and
 * so is a JAAS login module other than PropertyFileLoginModule: the worker refuses to
 * start and names it, rather than serving an open API where the config asked for a
 * secured one. The files are read once, at start (Kafka caches them the same way).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { readPropertiesFile } from '../../config/load.ts';
import type { Logger } from '../../util/logger.ts';
import { parseJaasConfig } from './jaas-config.ts';

export const BASIC_AUTH_EXTENSION =
  'org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension';
export const PROPERTY_FILE_LOGIN_MODULE =
  'org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule';
/** The JAAS entry Kafka Connect's filter logs in with. */
const LOGIN_CONTEXT = 'KafkaConnect';
const JAAS_PROPERTY = 'java.security.auth.login.config';

export const UNAUTHORIZED_MESSAGE = 'User cannot access the resource.';

/** Requests Kafka Connect's filter lets through: workers' internal calls. */
const INTERNAL_REQUESTS: ReadonlyArray<{ method: string; path: RegExp }> = [
  { method: 'PUT', path: /^\/connectors\/[^/]+\/fence\/?$/ },
];

export class BasicAuthenticator {
  private readonly digests: Map<string, Buffer>;

  /** `credentials`: user to password; empty lets every request in, as Kafka does. */
  constructor(
    credentials: ReadonlyMap<string, string>,
    /** The credentials file, for messages. */
    readonly source: string,
  ) {
    this.digests = new Map([...credentials].map(([user, password]) => [user, digest(password)]));
  }

  get permitsEveryone(): boolean {
    return this.digests.size === 0;
  }

  /** Whether an Authorization header value (undefined: none) names a known user and password. */
  authenticates(header: string | undefined): boolean {
    if (this.permitsEveryone) return true;
    const credentials = parseBasicAuthorization(header);
    if (credentials === undefined) return false;
    const expected = this.digests.get(credentials.user);
    // Compared as digests of equal length, in constant time.
    return expected !== undefined && timingSafeEqual(expected, digest(credentials.password));
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** `Basic base64(user:password)` (scheme in any case), else undefined. */
export function parseBasicAuthorization(
  header: string | undefined,
): { user: string; password: string } | undefined {
  if (header === undefined) return undefined;
  const space = header.indexOf(' ');
  if (space <= 0 || header.slice(0, space).toLowerCase() !== 'basic') return undefined;
  const encoded = header.slice(space + 1).trim();
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return undefined;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The JAAS file a worker uses: its own key, else `-D...` in KAFKA_OPTS (a JVM's). */
function jaasPath(
  values: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): { path: string; from: string } | undefined {
  const own = values[JAAS_PROPERTY] as string | null | undefined;
  if (typeof own === 'string' && own !== '') return { path: own, from: JAAS_PROPERTY };
  const opts = env.KAFKA_OPTS ?? '';
  const match = new RegExp(
    `(?:^|\\s)-D${JAAS_PROPERTY.replaceAll('.', '\\.')}=("([^"]*)"|(\\S+))`,
  ).exec(opts);
  if (match === null) return undefined;
  return { path: match[2] ?? match[3]!, from: `-D${JAAS_PROPERTY} in KAFKA_OPTS` };
}

/**
 * The authenticator rest.extension.classes asks for (null: none asked), or the reasons
 * it cannot be had, each naming the key, class or file at fault.
 */
export function restAuthFromConfig(
  values: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): { auth: BasicAuthenticator | null } | { errors: string[] } {
  const classes = (values['rest.extension.classes'] as string[] | undefined) ?? [];
  const errors: string[] = [];
  for (const c of classes) {
    if (c !== BASIC_AUTH_EXTENSION) {
      errors.push(
        `rest.extension.classes: ${c} is a Java REST extension this runtime cannot load; the one it implements is ${BASIC_AUTH_EXTENSION}`,
      );
    }
  }
  if (errors.length > 0) return { errors };
  if (!classes.includes(BASIC_AUTH_EXTENSION)) return { auth: null };

  const jaas = jaasPath(values, env);
  if (jaas === undefined) {
    return {
      errors: [
        `rest.extension.classes: BasicAuthSecurityRestExtension needs a JAAS file with a ${LOGIN_CONTEXT} entry: set ${JAAS_PROPERTY} (the worker key) or -D${JAAS_PROPERTY}=<file> in KAFKA_OPTS`,
      ],
    };
  }
  let text: string;
  try {
    text = readFileSync(jaas.path, 'utf8');
  } catch (e) {
    return {
      errors: [`${jaas.from}: cannot read the JAAS file ${jaas.path}: ${(e as Error).message}`],
    };
  }
  let entries: ReturnType<typeof parseJaasConfig>;
  try {
    entries = parseJaasConfig(text, jaas.path);
  } catch (e) {
    return { errors: [`${jaas.from}: ${(e as Error).message}`] };
  }
  const modules = entries.get(LOGIN_CONTEXT);
  if (modules === undefined || modules.length === 0) {
    return {
      errors: [
        `${jaas.path} has no ${LOGIN_CONTEXT} entry with a login module; BasicAuthSecurityRestExtension logs in with that entry`,
      ],
    };
  }
  for (const m of modules) {
    if (m.className !== PROPERTY_FILE_LOGIN_MODULE) {
      errors.push(
        `${jaas.path}: the ${LOGIN_CONTEXT} login module ${m.className} is a Java class this runtime cannot run; the one it implements is ${PROPERTY_FILE_LOGIN_MODULE}`,
      );
    }
  }
  if (modules.length > 1) {
    errors.push(
      `${jaas.path}: the ${LOGIN_CONTEXT} entry has ${modules.length} login modules; this runtime runs exactly one, ${PROPERTY_FILE_LOGIN_MODULE}`,
    );
  }
  if (errors.length > 0) return { errors };
  const module = modules[0]!;
  const unknown = [...module.options.keys()].filter((k) => k !== 'file');
  if (unknown.length > 0) {
    errors.push(
      `${jaas.path}: PropertyFileLoginModule has no option ${unknown.join(', ')}; its one option is file`,
    );
  }
  const file = module.options.get('file');
  if (file === undefined || file.trim() === '') {
    errors.push(
      `${jaas.path}: PropertyFileLoginModule needs file="<credentials .properties file>"`,
    );
  }
  if (errors.length > 0) return { errors };
  const read = readPropertiesFile(file!);
  if ('reason' in read) {
    return { errors: [`${jaas.path}: cannot read the credentials file ${file}: ${read.reason}`] };
  }
  return { auth: new BasicAuthenticator(new Map(Object.entries(read.values)), file!) };
}

/**
 * restAuthFromConfig for a worker starting without a CLI in front (tests, embedding):
 * the reasons thrown as one error. Either way an empty credentials file is logged.
 */
export function requireRestAuth(
  values: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): BasicAuthenticator | null {
  const resolved = restAuthFromConfig(values, env);
  if ('errors' in resolved) throw new Error(resolved.errors.join('; '));
  warnIfOpen(resolved.auth, logger);
  return resolved.auth;
}

/** Kafka lets every request in when the credentials file is empty; it is said at start. */
export function warnIfOpen(auth: BasicAuthenticator | null, logger: Logger): void {
  if (auth?.permitsEveryone) {
    logger.warn(
      `REST Basic authentication: the credentials file ${auth.source} is empty; every request is let in, as Kafka Connect does`,
    );
  }
}

/**
 * Checks every request of `app` against `auth`, after CORS (whose preflights, sent
 * without credentials by browsers, it answers first).
 */
export function installBasicAuth(app: FastifyInstance, auth: BasicAuthenticator): void {
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0]!;
    if (INTERNAL_REQUESTS.some((r) => r.method === request.method && r.path.test(path))) return;
    if (auth.authenticates(request.headers.authorization)) return;
    request.log.debug(`REST request ${request.method} ${path} failed authentication`);
    return reply
      .code(401)
      .header('www-authenticate', 'Basic realm="Kafka Connect", charset="UTF-8"')
      .send({ error_code: 401, message: UNAUTHORIZED_MESSAGE });
  });
}

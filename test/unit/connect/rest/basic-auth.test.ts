import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BASIC_AUTH_EXTENSION,
  type BasicAuthenticator,
  parseBasicAuthorization,
  restAuthFromConfig,
} from '../../../../src/connect/rest/basic-auth.ts';
import { parseJaasConfig } from '../../../../src/connect/rest/jaas-config.ts';
import { useTmpDir } from '../../../helpers/tmp-dir.ts';

const MODULE = 'org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule';

const basic = (userPassword: string) =>
  `Basic ${Buffer.from(userPassword, 'utf8').toString('base64')}`;

/** A JAAS file and credentials file in a fresh folder, as Kafka's docs write them. */
function files(jaasBody?: string, credentials = 'alice=secret\nbob: hunter2\n') {
  const dir = useTmpDir('basic-auth-');
  const passwords = join(dir, 'connect.password');
  writeFileSync(passwords, credentials);
  const jaas = join(dir, 'connect_jaas.conf');
  writeFileSync(
    jaas,
    jaasBody ?? `KafkaConnect {\n  ${MODULE} required\n  file="${passwords}";\n};\n`,
  );
  return { dir, jaas, passwords };
}

function resolved(values: Record<string, unknown>, env: Record<string, string> = {}) {
  const r = restAuthFromConfig(values, env);
  if ('errors' in r) throw new Error(r.errors.join('\n'));
  return r.auth;
}

function errorsOf(values: Record<string, unknown>, env: Record<string, string> = {}): string[] {
  const r = restAuthFromConfig(values, env);
  return 'errors' in r ? r.errors : [];
}

describe('parseJaasConfig', () => {
  it('reads entries, flags and options, with comments and quoted escapes', () => {
    const entries = parseJaasConfig(
      `// a comment
/* a block
   comment */
KafkaServer {
  org.apache.kafka.common.security.plain.PlainLoginModule required
    username="admin" password="a \\"quoted\\" secret";
};
KafkaConnect {
  ${MODULE} REQUIRED file=/etc/kafka/connect.password; # trailing comment
};`,
      'x.conf',
    );
    expect([...entries.keys()]).toEqual(['KafkaServer', 'KafkaConnect']);
    const server = entries.get('KafkaServer')![0]!;
    expect(server.flag).toBe('required');
    expect(server.options.get('password')).toBe('a "quoted" secret');
    const connect = entries.get('KafkaConnect')![0]!;
    expect(connect).toEqual({
      className: MODULE,
      flag: 'required',
      options: new Map([['file', '/etc/kafka/connect.password']]),
    });
  });

  it('names the line of a mistake', () => {
    expect(() =>
      parseJaasConfig(`KafkaConnect {\n  ${MODULE} mandatory file="x";\n};`, 'j.conf'),
    ).toThrow(
      /j\.conf, line 2: the control flag of .*PropertyFileLoginModule must be required, requisite, sufficient or optional, not 'mandatory'/,
    );
    expect(() =>
      parseJaasConfig(`KafkaConnect {\n  ${MODULE} required file="x"\n};`, 'j.conf'),
    ).toThrow(/line 3: expected an option name of .*, found '}'/);
    expect(() =>
      parseJaasConfig(`KafkaConnect {\n  ${MODULE} required file="x;\n};`, 'j.conf'),
    ).toThrow(/line 2: a quoted value is not closed/);
    expect(() => parseJaasConfig(`KafkaConnect {\n  ${MODULE} required;\n}`, 'j.conf')).toThrow(
      /the file ends where ';' after the entry KafkaConnect should be/,
    );
    expect(() => parseJaasConfig('A {\n};\nA {\n};', 'j.conf')).toThrow(
      /line 3: the entry A is given twice/,
    );
  });
});

describe('parseBasicAuthorization', () => {
  it('reads Basic credentials in any case of the scheme, the password after the first colon', () => {
    expect(parseBasicAuthorization(basic('alice:se:cret'))).toEqual({
      user: 'alice',
      password: 'se:cret',
    });
    expect(parseBasicAuthorization(`bAsIc ${Buffer.from('a:').toString('base64')}`)).toEqual({
      user: 'a',
      password: '',
    });
  });

  it('refuses other schemes, no colon, an empty user, and text that is not base64', () => {
    for (const header of [
      undefined,
      '',
      'Basic',
      `Bearer ${Buffer.from('alice:secret').toString('base64')}`,
      basic('alicesecret'),
      basic(':secret'),
      'Basic not*base64',
    ]) {
      expect(parseBasicAuthorization(header), String(header)).toBeUndefined();
    }
  });
});

describe('restAuthFromConfig', () => {
  it('is off without rest.extension.classes', () => {
    expect(resolved({ 'rest.extension.classes': [] })).toBeNull();
  });

  it('reads the JAAS file from KAFKA_OPTS as a JVM does, and checks user and password', () => {
    const { jaas } = files();
    const env = { KAFKA_OPTS: `-Xmx1g -Djava.security.auth.login.config=${jaas} -Dfoo=bar` };
    const auth = resolved({ 'rest.extension.classes': [BASIC_AUTH_EXTENSION] }, env)!;
    expect(auth.permitsEveryone).toBe(false);
    expect(auth.authenticates(basic('alice:secret'))).toBe(true);
    // `bob: hunter2` is a Java properties line with ':' as the separator.
    expect(auth.authenticates(basic('bob:hunter2'))).toBe(true);
    expect(auth.authenticates(basic('alice:Secret'))).toBe(false);
    expect(auth.authenticates(basic('alice:secret '))).toBe(false);
    expect(auth.authenticates(basic('carol:secret'))).toBe(false);
    expect(auth.authenticates(undefined)).toBe(false);
  });

  it('takes a quoted KAFKA_OPTS path, and the worker key over KAFKA_OPTS', () => {
    const { jaas } = files();
    const quoted = resolved(
      { 'rest.extension.classes': [BASIC_AUTH_EXTENSION] },
      { KAFKA_OPTS: `-Djava.security.auth.login.config="${jaas}"` },
    );
    expect(quoted?.authenticates(basic('alice:secret'))).toBe(true);
    const own = resolved(
      {
        'rest.extension.classes': [BASIC_AUTH_EXTENSION],
        'java.security.auth.login.config': jaas,
      },
      { KAFKA_OPTS: '-Djava.security.auth.login.config=/nonexistent/jaas.conf' },
    );
    expect(own?.authenticates(basic('alice:secret'))).toBe(true);
  });

  it('lets everyone in with an empty credentials file, as Kafka does, and says so', () => {
    const { jaas } = files(undefined, '# nobody\n');
    const auth: BasicAuthenticator = resolved({
      'rest.extension.classes': [BASIC_AUTH_EXTENSION],
      'java.security.auth.login.config': jaas,
    })!;
    expect(auth.permitsEveryone).toBe(true);
    expect(auth.authenticates(undefined)).toBe(true);
  });

  it('refuses by name what it cannot honour, instead of serving an open API', () => {
    const withJaas = (body: string) => ({
      'rest.extension.classes': [BASIC_AUTH_EXTENSION],
      'java.security.auth.login.config': files(body).jaas,
    });
    expect(errorsOf({ 'rest.extension.classes': ['com.example.OAuthExtension'] })).toEqual([
      `rest.extension.classes: com.example.OAuthExtension is a Java REST extension this runtime cannot load; the one it implements is ${BASIC_AUTH_EXTENSION}`,
    ]);
    expect(errorsOf({ 'rest.extension.classes': [BASIC_AUTH_EXTENSION] })).toEqual([
      expect.stringMatching(
        /needs a JAAS file with a KafkaConnect entry: set java\.security\.auth\.login\.config \(the worker key\) or -Djava\.security\.auth\.login\.config=<file> in KAFKA_OPTS/,
      ),
    ]);
    expect(
      errorsOf({
        'rest.extension.classes': [BASIC_AUTH_EXTENSION],
        'java.security.auth.login.config': '/nonexistent/jaas.conf',
      }),
    ).toEqual([
      expect.stringMatching(
        /^java\.security\.auth\.login\.config: cannot read the JAAS file \/nonexistent\/jaas\.conf/,
      ),
    ]);
    expect(
      errorsOf(
        { 'rest.extension.classes': [BASIC_AUTH_EXTENSION] },
        { KAFKA_OPTS: '-Djava.security.auth.login.config=/nonexistent/jaas.conf' },
      ),
    ).toEqual([
      expect.stringMatching(/^-Djava\.security\.auth\.login\.config in KAFKA_OPTS: cannot read/),
    ]);
    expect(errorsOf(withJaas('KafkaServer {\n};'))).toEqual([
      expect.stringMatching(/has no KafkaConnect entry with a login module/),
    ]);
    expect(
      errorsOf(
        withJaas('KafkaConnect {\n  com.example.LdapLoginModule required url="ldap://x";\n};'),
      ),
    ).toEqual([
      expect.stringMatching(
        /the KafkaConnect login module com\.example\.LdapLoginModule is a Java class this runtime cannot run/,
      ),
    ]);
    expect(errorsOf(withJaas(`KafkaConnect {\n  ${MODULE} required;\n};`))).toEqual([
      expect.stringMatching(/PropertyFileLoginModule needs file="<credentials \.properties file>"/),
    ]);
    expect(
      errorsOf(withJaas(`KafkaConnect {\n  ${MODULE} required file="/x" debug="true";\n};`)),
    ).toEqual([
      expect.stringMatching(/PropertyFileLoginModule has no option debug; its one option is file/),
    ]);
    expect(
      errorsOf(
        withJaas(`KafkaConnect {\n  ${MODULE} required file="/nonexistent/connect.password";\n};`),
      ),
    ).toEqual([
      expect.stringMatching(
        /cannot read the credentials file \/nonexistent\/connect\.password: no such file/,
      ),
    ]);
  });
});

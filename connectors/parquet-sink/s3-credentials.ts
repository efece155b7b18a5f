/**
 * `s3.credentials.provider.class`: the credential provider class names a Confluent S3
 * sink config carries (Confluent's own, the AWS SDK for Java v1's and v2's), mapped to
 * the AWS SDK for JavaScript v3 providers that do the same thing.
 *
 * Confluent's rules, kept here:
 *   - with `aws.access.key.id` and `aws.secret.access.key` set, a provider that takes
 *     no configuration is replaced by those static keys (S3SinkConnectorConfig
 *     .getCredentialsProvider);
 *   - AwsAssumeRoleCredentialsProvider assumes `sts.role.arn` as
 *     `sts.role.session.name` (with `sts.role.external.id` when set). Confluent reads
 *     these under the `s3.credentials.provider.` prefix; the bare `sts.role.*` names
 *     are accepted too. The STS call is signed with the static keys when set, else with
 *     the default chain; `sts.region` picks the STS region.
 * A class with no v3 equivalent (Java system properties, a custom class) is refused by
 * name at validation (config.ts), never replaced by the default chain.
 */

import type { S3ClientConfig } from '@aws-sdk/client-s3';
import {
  fromContainerMetadata,
  fromEnv,
  fromIni,
  fromInstanceMetadata,
  fromNodeProviderChain,
  fromTemporaryCredentials,
  fromTokenFile,
} from '@aws-sdk/credential-providers';

type Credentials = NonNullable<S3ClientConfig['credentials']>;

export type ProviderKind =
  | 'default'
  | 'environment'
  | 'profile'
  | 'web-identity'
  | 'instance-profile'
  | 'container'
  | 'assume-role';

const V1 = 'com.amazonaws.auth.';
const V2 = 'software.amazon.awssdk.auth.credentials.';

/** Every accepted class name (and the project's short names) with what it maps to. */
export const PROVIDER_CLASSES: Readonly<Record<string, ProviderKind>> = {
  default: 'default',
  [`${V1}DefaultAWSCredentialsProviderChain`]: 'default',
  [`${V2}DefaultCredentialsProvider`]: 'default',
  environment: 'environment',
  [`${V1}EnvironmentVariableCredentialsProvider`]: 'environment',
  [`${V2}EnvironmentVariableCredentialsProvider`]: 'environment',
  profile: 'profile',
  [`${V1}profile.ProfileCredentialsProvider`]: 'profile',
  [`${V2}ProfileCredentialsProvider`]: 'profile',
  'web-identity': 'web-identity',
  [`${V1}WebIdentityTokenCredentialsProvider`]: 'web-identity',
  [`${V2}WebIdentityTokenFileCredentialsProvider`]: 'web-identity',
  'instance-profile': 'instance-profile',
  [`${V1}InstanceProfileCredentialsProvider`]: 'instance-profile',
  [`${V2}InstanceProfileCredentialsProvider`]: 'instance-profile',
  container: 'container',
  [`${V1}ContainerCredentialsProvider`]: 'container',
  [`${V1}EC2ContainerCredentialsProviderWrapper`]: 'container',
  [`${V2}ContainerCredentialsProvider`]: 'container',
  'assume-role': 'assume-role',
  'io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider': 'assume-role',
};

/** Known Java classes that have no v3 counterpart, with what to use instead. */
export const REFUSED_PROVIDER_CLASSES: Readonly<Record<string, string>> = {
  [`${V1}SystemPropertiesCredentialsProvider`]:
    'Java system properties do not exist here; set aws.access.key.id and aws.secret.access.key, or use EnvironmentVariableCredentialsProvider',
  [`${V2}SystemPropertyCredentialsProvider`]:
    'Java system properties do not exist here; set aws.access.key.id and aws.secret.access.key, or use EnvironmentVariableCredentialsProvider',
  [`${V1}AWSStaticCredentialsProvider`]:
    'set aws.access.key.id and aws.secret.access.key instead (static keys)',
  [`${V2}StaticCredentialsProvider`]:
    'set aws.access.key.id and aws.secret.access.key instead (static keys)',
  [`${V1}AnonymousAWSCredentials`]: 'anonymous access is not supported; give credentials',
  [`${V2}AnonymousCredentialsProvider`]: 'anonymous access is not supported; give credentials',
};

export type CredentialsSpec =
  | { kind: 'static'; accessKeyId: string; secretAccessKey: string }
  | { kind: Exclude<ProviderKind, 'assume-role'> }
  | {
      kind: 'assume-role';
      roleArn: string;
      sessionName: string;
      externalId?: string;
      stsRegion?: string;
      /** Signs the STS call; the default chain when absent. */
      base?: { accessKeyId: string; secretAccessKey: string };
    };

/** Undefined when the name is neither mapped nor one of the Java classes refused. */
export function providerKind(className: string): ProviderKind | undefined {
  return PROVIDER_CLASSES[className.trim()];
}

export interface CredentialsInput {
  className: string;
  accessKeyId: string;
  secretAccessKey: string;
  roleArn: string;
  sessionName: string;
  externalId: string;
  stsRegion: string;
}

/** The spec a valid configuration asks for (validation has checked the class name). */
export function credentialsSpec(i: CredentialsInput): CredentialsSpec {
  const kind = providerKind(i.className) ?? 'default';
  const keys =
    i.accessKeyId !== ''
      ? { accessKeyId: i.accessKeyId, secretAccessKey: i.secretAccessKey }
      : undefined;
  if (kind === 'assume-role') {
    return {
      kind,
      roleArn: i.roleArn,
      sessionName: i.sessionName,
      ...(i.externalId ? { externalId: i.externalId } : {}),
      ...(i.stsRegion ? { stsRegion: i.stsRegion } : {}),
      ...(keys ? { base: keys } : {}),
    };
  }
  if (keys) return { kind: 'static', ...keys };
  return { kind };
}

/** The SDK v3 provider for a spec; `region` is the bucket's, STS's unless sts.region says. */
export function credentialsProvider(spec: CredentialsSpec, region: string): Credentials {
  switch (spec.kind) {
    case 'static':
      return { accessKeyId: spec.accessKeyId, secretAccessKey: spec.secretAccessKey };
    case 'default':
      return fromNodeProviderChain();
    case 'environment':
      return fromEnv();
    case 'profile':
      return fromIni();
    case 'web-identity':
      return fromTokenFile();
    case 'instance-profile':
      return fromInstanceMetadata();
    case 'container':
      return fromContainerMetadata();
    case 'assume-role':
      return fromTemporaryCredentials({
        params: {
          RoleArn: spec.roleArn,
          RoleSessionName: spec.sessionName,
          ...(spec.externalId ? { ExternalId: spec.externalId } : {}),
        },
        ...(spec.base ? { masterCredentials: spec.base } : {}),
        clientConfig: { region: spec.stsRegion ?? region },
      });
  }
}

import { describe, expect, it } from 'vitest';
import { credentialsSpec, providerKind } from '../s3-credentials.ts';

const none = {
  accessKeyId: '',
  secretAccessKey: '',
  roleArn: '',
  sessionName: '',
  externalId: '',
  stsRegion: '',
};

describe('s3.credentials.provider.class', () => {
  it.each([
    ['com.amazonaws.auth.DefaultAWSCredentialsProviderChain', 'default'],
    ['software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider', 'default'],
    ['com.amazonaws.auth.EnvironmentVariableCredentialsProvider', 'environment'],
    [
      'software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider',
      'environment',
    ],
    ['com.amazonaws.auth.profile.ProfileCredentialsProvider', 'profile'],
    ['software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider', 'profile'],
    ['com.amazonaws.auth.WebIdentityTokenCredentialsProvider', 'web-identity'],
    [
      'software.amazon.awssdk.auth.credentials.WebIdentityTokenFileCredentialsProvider',
      'web-identity',
    ],
    ['com.amazonaws.auth.InstanceProfileCredentialsProvider', 'instance-profile'],
    ['com.amazonaws.auth.EC2ContainerCredentialsProviderWrapper', 'container'],
    ['software.amazon.awssdk.auth.credentials.ContainerCredentialsProvider', 'container'],
    ['io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider', 'assume-role'],
  ])('%s maps to the SDK v3 %s provider', (className, kind) => {
    expect(providerKind(className)).toBe(kind);
    expect(credentialsSpec({ ...none, className }).kind).toBe(kind);
  });

  it('an unknown class maps to nothing (validation refuses it by name)', () => {
    expect(providerKind('com.example.VaultCredentialsProvider')).toBeUndefined();
  });

  it("static keys replace a provider that takes no configuration, as in Confluent's connector", () => {
    const spec = credentialsSpec({
      ...none,
      className: 'com.amazonaws.auth.profile.ProfileCredentialsProvider',
      accessKeyId: 'AKIA',
      secretAccessKey: 's',
    });

    expect(spec).toEqual({ kind: 'static', accessKeyId: 'AKIA', secretAccessKey: 's' });
  });

  it('AwsAssumeRoleCredentialsProvider assumes the role, signing STS with the static keys when set', () => {
    const spec = credentialsSpec({
      className: 'io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider',
      accessKeyId: 'AKIA',
      secretAccessKey: 's',
      roleArn: 'arn:aws:iam::1:role/r',
      sessionName: 'sink',
      externalId: 'x',
      stsRegion: 'eu-west-1',
    });

    expect(spec).toEqual({
      kind: 'assume-role',
      roleArn: 'arn:aws:iam::1:role/r',
      sessionName: 'sink',
      externalId: 'x',
      stsRegion: 'eu-west-1',
      base: { accessKeyId: 'AKIA', secretAccessKey: 's' },
    });
  });
});

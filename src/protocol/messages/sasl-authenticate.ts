/** SaslAuthenticate (key 36). Spec: Kafka's SaslAuthenticateRequest.json / ...Response.json. */
import { api, field as f } from '../schema.ts';

export const saslAuthenticate = api({
  apiKey: 36,
  name: 'SaslAuthenticate',
  maxVersion: 2,
  flexibleFrom: 2,
  request: [f('authBytes', 'bytes', '0+')],
  response: [
    f('errorCode', 'int16', '0+'),
    f('errorMessage', 'string', '0+', { nullable: '0+' }),
    f('authBytes', 'bytes', '0+'),
    f('sessionLifetimeMs', 'int64', '1+', { default: 0n }),
  ],
});

/** SaslHandshake (key 17). Spec: Kafka's SaslHandshakeRequest.json / ...Response.json. */
import { api, array, field as f } from '../schema.ts';

export const saslHandshake = api({
  apiKey: 17,
  name: 'SaslHandshake',
  maxVersion: 1,
  flexibleFrom: null,
  request: [f('mechanism', 'string', '0+')],
  response: [f('errorCode', 'int16', '0+'), f('mechanisms', array('string'), '0+')],
});

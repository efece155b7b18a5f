/**
 * FindCoordinator (key 10). Spec: Kafka's FindCoordinatorRequest.json / ...Response.json.
 * keyType: 0 group, 1 transaction. v4 batches keys.
 */
import { api, array, field as f } from '../schema.ts';

export const findCoordinator = api({
  apiKey: 10,
  name: 'FindCoordinator',
  maxVersion: 4,
  flexibleFrom: 3,
  request: [
    f('key', 'string', '0-3'),
    f('keyType', 'int8', '1+', { default: 0 }),
    f('coordinatorKeys', array('string'), '4+'),
  ],
  response: [
    f('throttleTimeMs', 'int32', '1+'),
    f('errorCode', 'int16', '0-3'),
    f('errorMessage', 'string', '1-3', { nullable: '1-3' }),
    f('nodeId', 'int32', '0-3'),
    f('host', 'string', '0-3'),
    f('port', 'int32', '0-3'),
    f(
      'coordinators',
      array([
        f('key', 'string', '4+'),
        f('nodeId', 'int32', '4+'),
        f('host', 'string', '4+'),
        f('port', 'int32', '4+'),
        f('errorCode', 'int16', '4+'),
        f('errorMessage', 'string', '4+', { nullable: '4+' }),
      ]),
      '4+',
    ),
  ],
});

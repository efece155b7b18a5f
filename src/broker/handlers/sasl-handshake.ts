/**
 * SaslHandshake (key 17): this broker has no SASL, so every mechanism is refused
 * with UNSUPPORTED_SASL_MECHANISM and an empty list of enabled mechanisms, and the
 * refusal is counted as a failed authentication (broker-metrics.ts): a client sent it
 * because it was configured to authenticate, and it cannot.
 */
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

export const handleSaslHandshake: RequestHandler<BrokerServices> = (_body, _context, services) => {
  services.metrics?.authenticationFailed?.();
  return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: [] };
};

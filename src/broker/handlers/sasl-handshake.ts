/**
 * SaslHandshake (key 17): this broker has no SASL, so every mechanism is refused
 * with UNSUPPORTED_SASL_MECHANISM and an empty list of enabled mechanisms.
 */
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { BrokerServices } from './broker-services.ts';
import type { RequestHandler } from './handler.ts';

export const handleSaslHandshake: RequestHandler<BrokerServices> = () => ({
  errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM,
  mechanisms: [],
});

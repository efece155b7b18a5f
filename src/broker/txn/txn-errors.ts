/**
 * The transaction coordinator's answers, by Kafka error name (the handlers turn them
 * into codes through the protocol's one error table). The coordinator always speaks
 * of a fenced producer as PRODUCER_FENCED; `fencedErrorFor` gives what a client of
 * an older request version understands instead (KIP-588: versions before the error
 * existed get INVALID_PRODUCER_EPOCH).
 */
import { ApiKey } from '../../protocol/api-keys.ts';

export type TxnError =
  | 'NONE'
  | 'INVALID_REQUEST'
  | 'INVALID_TRANSACTION_TIMEOUT'
  | 'INVALID_PRODUCER_ID_MAPPING'
  | 'INVALID_PRODUCER_EPOCH'
  | 'PRODUCER_FENCED'
  | 'INVALID_TXN_STATE'
  | 'CONCURRENT_TRANSACTIONS'
  | 'COORDINATOR_NOT_AVAILABLE'
  | 'UNKNOWN_TOPIC_OR_PARTITION'
  | 'OPERATION_NOT_ATTEMPTED'
  | 'KAFKA_STORAGE_ERROR';

/** The first version of each API that knows PRODUCER_FENCED (90), per Kafka's message specs. */
const PRODUCER_FENCED_FROM: Readonly<Record<number, number>> = {
  [ApiKey.InitProducerId]: 4,
  [ApiKey.AddPartitionsToTxn]: 2,
  [ApiKey.AddOffsetsToTxn]: 2,
  [ApiKey.EndTxn]: 2,
  [ApiKey.TxnOffsetCommit]: 3,
};

export function fencedErrorFor(error: TxnError, apiKey: number, apiVersion: number): TxnError {
  if (error !== 'PRODUCER_FENCED') return error;
  const from = PRODUCER_FENCED_FROM[apiKey];
  return from !== undefined && apiVersion < from ? 'INVALID_PRODUCER_EPOCH' : error;
}

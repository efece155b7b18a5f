/**
 * DescribeTransactions (key 65) and ListTransactions (key 66), KIP-664: the
 * coordinator's view of transactional ids, state names as Kafka spells them
 * (transaction-metadata.ts). An unknown id is TRANSACTIONAL_ID_NOT_FOUND; state
 * filters that name no state come back in unknownStateFilters.
 */
import type { Message } from '../../../protocol/codec.ts';
import { ErrorCode } from '../../../protocol/error-codes.ts';
import { TXN_STATUS_IDS, type TxnStatus } from '../../txn/transaction-metadata.ts';
import type { BrokerServices } from '../broker-services.ts';
import type { RequestHandler } from '../handler.ts';

export const handleDescribeTransactions: RequestHandler<BrokerServices> = (
  body,
  _context,
  services,
) => ({
  throttleTimeMs: 0,
  transactionStates: (body.transactionalIds as string[]).map((transactionalId): Message => {
    const meta = services.transactions.describe(transactionalId);
    if (meta === undefined) {
      return {
        errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
        transactionalId,
        transactionState: '',
        transactionTimeoutMs: 0,
        transactionStartTimeMs: -1n,
        producerId: -1n,
        producerEpoch: -1,
        topics: [],
      };
    }
    const byTopic = new Map<string, number[]>();
    for (const p of meta.partitions)
      byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p.partition]);
    return {
      errorCode: 0,
      transactionalId,
      transactionState: meta.state,
      transactionTimeoutMs: meta.timeoutMs,
      transactionStartTimeMs: BigInt(meta.txnStartTimestamp),
      producerId: BigInt(meta.producerId),
      producerEpoch: meta.producerEpoch,
      topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
    };
  }),
});

export const handleListTransactions: RequestHandler<BrokerServices> = (
  body,
  _context,
  services,
) => {
  const states = body.stateFilters as string[];
  const unknownStateFilters = states.filter((s) => !(s in TXN_STATUS_IDS));
  const wantedStates = new Set(states.filter((s) => s in TXN_STATUS_IDS) as TxnStatus[]);
  const wantedIds = new Set((body.producerIdFilters as bigint[]).map(Number));
  const minDuration = Number(body.durationFilter);
  const now = services.clock.now();
  const transactionStates = services.transactions
    .all()
    .filter((m) => states.length === 0 || wantedStates.has(m.state))
    .filter((m) => wantedIds.size === 0 || wantedIds.has(m.producerId))
    // v1: only transactions running at least this long (an open one has a start time).
    .filter(
      (m) =>
        minDuration < 0 || (m.txnStartTimestamp >= 0 && now - m.txnStartTimestamp >= minDuration),
    )
    .map((m) => ({
      transactionalId: m.transactionalId,
      producerId: BigInt(m.producerId),
      transactionState: m.state,
    }));
  return { throttleTimeMs: 0, errorCode: 0, unknownStateFilters, transactionStates };
};

/**
 * The transaction coordinator's request handlers by API key (InitProducerId is in
 * ../), with the KIP-664 admin APIs that describe transactions and producer state.
 */
import { ApiKey } from '../../../protocol/api-keys.ts';
import type { BrokerServices } from '../broker-services.ts';
import type { RequestHandler } from '../handler.ts';
import { handleAddOffsetsToTxn } from './add-offsets-to-txn.ts';
import { handleAddPartitionsToTxn } from './add-partitions-to-txn.ts';
import { handleDescribeProducers } from './describe-producers.ts';
import { handleDescribeTransactions, handleListTransactions } from './describe-transactions.ts';
import { handleEndTxn } from './end-txn.ts';
import { handleTxnOffsetCommit } from './txn-offset-commit.ts';

export const txnHandlers: ReadonlyArray<[number, RequestHandler<BrokerServices>]> = [
  [ApiKey.AddPartitionsToTxn, handleAddPartitionsToTxn],
  [ApiKey.AddOffsetsToTxn, handleAddOffsetsToTxn],
  [ApiKey.EndTxn, handleEndTxn],
  [ApiKey.TxnOffsetCommit, handleTxnOffsetCommit],
  [ApiKey.DescribeProducers, handleDescribeProducers],
  [ApiKey.DescribeTransactions, handleDescribeTransactions],
  [ApiKey.ListTransactions, handleListTransactions],
];

/** The store a sink configuration names: a local folder or an S3 bucket. */
import type { ParquetSinkConfig } from './config.ts';
import { LocalStore } from './local-store.ts';
import type { ObjectStore } from './object-store.ts';
import { S3Store } from './s3-store.ts';

export function createStore(store: ParquetSinkConfig['store']): ObjectStore {
  return store.kind === 'local' ? new LocalStore(store.url) : new S3Store(store);
}

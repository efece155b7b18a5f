/**
 * The transform chain of one task: the connector's `transforms` aliases in order, each
 * `transforms.<alias>.type` instantiated from the plugin registry and configured with
 * its `transforms.<alias>.*` keys (type, predicate and negate removed), optionally
 * guarded by the predicate `transforms.<alias>.predicate` (`predicates.<name>.type`,
 * configured with `predicates.<name>.*`), inverted by `transforms.<alias>.negate`.
 *
 * A record is passed through each stage in order; a stage returning null drops it and
 * ends the chain. Each stage runs under the task's error handling (stage
 * TRANSFORMATION), so a DataException is tolerated or fails the task per
 * errors.tolerance. Instances belong to one task; `close()` releases them.
 */
import type { ConnectRecord } from '../api/connect-record.ts';
import { ConnectException } from '../api/errors.ts';
import type { Predicate, Transformation } from '../api/transformation.ts';
import {
  type RecordContext,
  type RetryWithToleranceOperator,
  type Skipped,
  skipped,
} from '../errors/retry-with-tolerance-operator.ts';
import { listValue, withPrefix } from './plugin-config.ts';
import type { PluginRegistry } from './plugins.ts';

interface Stage {
  readonly alias: string;
  readonly className: string;
  readonly transform: Transformation;
  readonly predicate?: Predicate;
  readonly negate: boolean;
}

export class TransformationChain {
  private constructor(
    private readonly stages: readonly Stage[],
    private readonly predicates: readonly Predicate[],
  ) {}

  /** Build the chain a connector config describes; throws ConnectException naming the bad key. */
  static fromConfig(
    plugins: PluginRegistry,
    config: Readonly<Record<string, string>>,
  ): TransformationChain {
    const predicates = new Map<string, Predicate>();
    for (const alias of listValue(config.predicates)) {
      const cls = config[`predicates.${alias}.type`];
      const manifest = cls === undefined ? undefined : plugins.findOfType(cls, 'predicate');
      if (manifest === undefined) {
        throw new ConnectException(
          `Invalid value ${cls ?? 'null'} for configuration predicates.${alias}.type: Class ${cls ?? 'null'} could not be found.`,
        );
      }
      const predicate = manifest.create();
      predicate.configure(withPrefix(config, `predicates.${alias}.`, ['type']));
      predicates.set(alias, predicate);
    }
    const stages: Stage[] = [];
    for (const alias of listValue(config.transforms)) {
      const prefix = `transforms.${alias}.`;
      const cls = config[`${prefix}type`];
      const manifest = cls === undefined ? undefined : plugins.findOfType(cls, 'transformation');
      if (manifest === undefined) {
        throw new ConnectException(
          `Invalid value ${cls ?? 'null'} for configuration ${prefix}type: Class ${cls ?? 'null'} could not be found.`,
        );
      }
      const transform = manifest.create();
      transform.configure(withPrefix(config, prefix, ['type', 'predicate', 'negate']));
      const predicateAlias = config[`${prefix}predicate`]?.trim();
      let predicate: Predicate | undefined;
      if (predicateAlias !== undefined && predicateAlias !== '') {
        predicate = predicates.get(predicateAlias);
        if (predicate === undefined) {
          throw new ConnectException(
            `Invalid value ${predicateAlias} for configuration ${prefix}predicate: Predicate alias ${predicateAlias} is not in the predicates list`,
          );
        }
      }
      stages.push({
        alias,
        className: manifest.className,
        transform,
        ...(predicate ? { predicate } : {}),
        negate: config[`${prefix}negate`]?.trim().toLowerCase() === 'true',
      });
    }
    return new TransformationChain(stages, [...predicates.values()]);
  }

  get isEmpty(): boolean {
    return this.stages.length === 0;
  }

  /**
   * The record after every stage; null when a stage dropped it, `skipped` when a
   * stage failed and the failure was tolerated.
   */
  apply<R extends ConnectRecord>(
    record: R,
    operator: RetryWithToleranceOperator,
    context: RecordContext,
  ): R | null | Skipped {
    if (this.stages.length === 0) return record;
    let current: R = record;
    for (const stage of this.stages) {
      const input = current;
      const out = operator.execute('TRANSFORMATION', stage.className, context, (): R | null => {
        if (stage.predicate !== undefined && stage.predicate.test(input) === stage.negate) {
          return input;
        }
        return stage.transform.apply(input);
      });
      if (out === skipped || out === null) return out;
      current = out;
    }
    return current;
  }

  close(): void {
    for (const stage of this.stages) stage.transform.close?.();
    for (const predicate of this.predicates) predicate.close?.();
  }
}

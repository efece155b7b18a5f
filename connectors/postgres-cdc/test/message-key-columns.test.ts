import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/connect/api/index.ts';
import { postgresCdcConfigDefs } from '../src/connector-config.ts';
import { MessageKeyColumns, messageKeyColumnsProblem } from '../src/message-key-columns.ts';

const orders = { schema: 'inventory', table: 'purchaseorders' };
const customers = { schema: 'inventory', table: 'customers' };

describe('message.key.columns (no database)', () => {
  it("keys the tables of Debezium's documented example by the columns it names", () => {
    const keys = new MessageKeyColumns('inventory.customers:pk1,pk2;(.*).purchaseorders:pk3,pk4');

    expect(keys.keyFor(customers, ['id', 'pk2', 'pk1', 'name'])).toEqual(['pk1', 'pk2']);
    expect(keys.keyFor(orders, ['pk4', 'pk3'])).toEqual(['pk3', 'pk4']);
  });

  it('orders the key as the entry writes the columns, not as the table holds them', () => {
    expect(
      new MessageKeyColumns('public.t:b,a').keyFor({ schema: 'public', table: 't' }, ['a', 'b']),
    ).toEqual(['b', 'a']);
  });

  it('leaves a table no entry names, or none of whose columns it names, to its own key (null)', () => {
    const keys = new MessageKeyColumns('inventory.customers:pk1');

    expect(keys.keyFor(orders, ['pk1'])).toBeNull();
    expect(keys.keyFor(customers, ['id'])).toBeNull();
    expect(new MessageKeyColumns(null).keyFor(customers, ['pk1'])).toBeNull();
  });

  it('matches the whole schema.table.column, case-insensitively, with column regexes', () => {
    const keys = new MessageKeyColumns('Inventory.CUST[a-z]*:ID,region_.*');

    expect(keys.keyFor(customers, ['region_a', 'id', 'x_id', 'region_b'])).toEqual([
      'id',
      'region_a',
      'region_b',
    ]);
    expect(keys.keyFor({ schema: 'xinventory', table: 'customers' }, ['id'])).toBeNull();
  });

  it('puts a column two regexes match in the key once', () => {
    expect(
      new MessageKeyColumns('public.t:id,i.*').keyFor({ schema: 'public', table: 't' }, [
        'ix',
        'id',
      ]),
    ).toEqual(['id', 'ix']);
  });

  it.each([
    ['public.t', /must have the form/],
    ['public.t:a:b', /must have the form/],
    ['public.t: a', /must have the form/],
    ['public.t:a,,b', /empty column name/],
    ['public.(t:a', /not a valid regular expression/],
  ])('refuses %j in config validation, naming the entry', (value, message) => {
    expect(messageKeyColumnsProblem(value)).toMatch(message);
    const parsed = parseConfig(postgresCdcConfigDefs, {
      'database.hostname': 'h',
      'database.user': 'u',
      'database.dbname': 'd',
      'topic.prefix': 'p',
      'message.key.columns': value,
    });
    expect(parsed.errors.map((e) => e.key)).toEqual(['message.key.columns']);
  });

  it('accepts blanks around entries, as Debezium does', () => {
    expect(messageKeyColumnsProblem(' public.a:id ; public.b:x,y ')).toBeUndefined();
    expect(
      new MessageKeyColumns(' public.a:id ; public.b:x,y ').keyFor(
        { schema: 'public', table: 'b' },
        ['y', 'x'],
      ),
    ).toEqual(['x', 'y']);
  });
});

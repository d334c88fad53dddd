import type { Condition, ReadDoc, ReadOp, RowGuard } from './read-store.port';

declare const rowType: unique symbol;

/**
 * A read model's collection name that carries its row type. It is still a string (queries pass it to the
 * read store as before), and the writes built from it by `put` and `patch` are checked against the row, so a
 * field renamed in the row type fails to compile in the projection that writes it.
 */
export type Collection<Row extends ReadDoc> = string & { readonly [rowType]: Row };

/** Declares a read model's collection; its name is stored, so it never changes once written. */
export const collection = <Row extends ReadDoc>(name: string): Collection<Row> => name as Collection<Row>;

type NumericKey<Row> = { [K in keyof Row]-?: NonNullable<Row[K]> extends number ? K : never }[keyof Row] & string;
type OptionalKey<Row> = { [K in keyof Row]-?: undefined extends Row[K] ? K : never }[keyof Row] & string;

/** Top-level fields a patch may set: any but `id`, each with its row type. */
export type RowChanges<Row extends ReadDoc> = { -readonly [K in Exclude<keyof Row, 'id'>]?: Row[K] };

/** Puts a whole row. */
export const put = <Row extends ReadDoc>(into: Collection<Row>, doc: NoInfer<Row>): ReadOp => ({ op: 'put', collection: into, doc });

/** Changes fields of a row (a missing row stays missing): `set` and `inc` name top-level fields of the row. */
export const patch = <Row extends ReadDoc>(
  into: Collection<Row>,
  id: string,
  change: { readonly set?: NoInfer<RowChanges<Row>>; readonly unset?: readonly NoInfer<OptionalKey<Row>>[]; readonly inc?: NoInfer<Partial<Record<NumericKey<Row>, number>>> },
): ReadOp => ({
  op: 'patch',
  collection: into,
  id,
  ...(change.set ? { set: change.set } : {}),
  ...(change.unset ? { unset: change.unset } : {}),
  ...(change.inc ? { inc: change.inc as Readonly<Record<string, number>> } : {}),
});

/**
 * Adds to numeric fields (dot paths) of a row, creating the row with `create` when it is missing (a per-minute counter). Guarded
 * by position like every write, so an event applied again adds nothing.
 */
export const increment = <Row extends ReadDoc>(into: Collection<Row>, id: string, create: NoInfer<RowChanges<Row>>, inc: Readonly<Record<string, number>>): ReadOp => ({
  op: 'patch',
  collection: into,
  id,
  inc,
  create,
});

export const remove = <Row extends ReadDoc>(from: Collection<Row>, id: string): ReadOp => ({ op: 'delete', collection: from, id });

/** Deletes the rows matching every condition; conditions name top-level fields of the row. */
export const removeWhere = <Row extends ReadDoc>(from: Collection<Row>, where: readonly (Condition & { readonly field: NoInfer<keyof Row & string> })[]): ReadOp => ({
  op: 'deleteWhere',
  collection: from,
  where,
});

/** The op, applied only while the guard row of its collection holds (`RowGuard`). */
export const onlyIf = (guard: RowGuard, op: ReadOp): ReadOp => ({ ...op, onlyIf: guard });

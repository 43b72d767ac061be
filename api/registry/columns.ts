/**
 * Parts of a present function: the columns a response answers as they are stored, and the times
 * it answers as ISO 8601 text, named once each instead of one `name: row.name` line per field.
 */

/** The columns of `row` named in `names`, as they are stored. */
export function columns<Row, K extends keyof Row>(row: Row, names: readonly K[]): Pick<Row, K> {
  const picked = {} as Pick<Row, K>;
  for (const name of names) picked[name] = row[name];
  return picked;
}

type IsoOf<T> = T extends Date ? string : T extends null | undefined ? null : never;

/** The time columns of `row` named in `names`, as ISO 8601 text (null stays null). */
export function isoColumns<Row, K extends keyof Row>(
  row: Row,
  names: readonly K[],
): { [N in K]: IsoOf<Row[N]> } {
  const times = {} as Record<K, string | null>;
  for (const name of names) {
    const value = row[name] as Date | null | undefined;
    times[name] = value ? value.toISOString() : null;
  }
  return times as { [N in K]: IsoOf<Row[N]> };
}

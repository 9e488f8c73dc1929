/**
 * A table's columns written once, keyed by its row class's properties, and every SQL list and JSON record derived
 * from them: the select list (aliased to the properties, so one row class serves reads), the column and
 * recordset lists of inserts, the SET list of updates, and the records sent through `jsonb_to_recordset`.
 */

/** What a save does with a column. */
export type ColumnRole =
  /** The primary key: never rewritten, it finds the row. */
  | 'key'
  /** Written when the row is inserted, never after. */
  | 'fixed'
  /** Rewritten by every save. */
  | 'saved'
  /** The optimistic version: checked and bumped by a save. */
  | 'version';

export interface ColumnSpec {
  column: string;
  /** The SQL type, as a recordset (`jsonb_to_recordset(...) AS r(...)`) declares it. */
  type: string;
  role: ColumnRole;
}

/** One spec per property of the row: a property without a column (or the reverse) does not compile. */
export type ColumnTable<Row> = { [K in keyof Row]-?: ColumnSpec };

export class SqlColumns<Row> {
  private readonly entries: ReadonlyArray<{ key: keyof Row & string } & ColumnSpec>;

  /** `column AS "property"` (just `column` where they are spelled alike), in the table's order. */
  readonly select: string;
  /** Every column name, in the table's order. */
  readonly names: string;
  /** `column type` for every column: a recordset of whole rows. */
  readonly recordset: string;
  /** The columns every save rewrites, in the table's order. */
  readonly saved: ReadonlyArray<{ key: keyof Row & string } & ColumnSpec>;
  /** The properties read back as text from JSON that are dates. */
  private readonly dates: ReadonlyArray<keyof Row & string>;

  constructor(table: ColumnTable<Row>) {
    this.entries = (Object.keys(table) as Array<keyof Row & string>).map((key) => ({ key, ...table[key] }));
    this.select = this.entries.map((c) => (c.column === c.key ? c.column : `${c.column} AS "${c.key}"`)).join(', ');
    this.names = this.entries.map((c) => c.column).join(', ');
    this.recordset = this.entries.map((c) => `${c.column} ${c.type}`).join(', ');
    this.saved = this.entries.filter((c) => c.role === 'saved');
    this.dates = this.entries.filter((c) => c.type === 'timestamptz').map((c) => c.key);
  }

  /** The columns of a role, in the table's order. */
  withRole(role: ColumnRole): ReadonlyArray<{ key: keyof Row & string } & ColumnSpec> {
    return this.entries.filter((c) => c.role === role);
  }

  /** `column = r.column` for every saved column: the SET list of an update from a recordset `r`. */
  get setFromRecordset(): string {
    return this.saved.map((c) => `${c.column} = r.${c.column}`).join(', ');
  }

  /** The row as a JSON record for `jsonb_to_recordset`, keyed by column names (`recordset` declares them). */
  toRecord(row: Row): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const c of this.entries) out[c.column] = row[c.key];
    return out;
  }

  /** A row read through `json_agg` of the select list: the row's keys already, dates as text. */
  fromJson(json: Record<string, unknown>): Row {
    const row = { ...json } as Record<string, unknown>;
    for (const k of this.dates) row[k] = json[k] === null || json[k] === undefined ? null : new Date(json[k] as string);
    return row as Row;
  }
}

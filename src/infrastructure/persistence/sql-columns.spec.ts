import { SqlColumns } from './sql-columns';

interface Row {
  tenantId: string;
  id: string;
  title: string | null;
  tags: string[] | null;
  dueAt: Date | null;
  version: number;
}

const columns = new SqlColumns<Row>({
  tenantId: { column: 'tenant_id', type: 'text', role: 'key' },
  id: { column: 'id', type: 'text', role: 'key' },
  title: { column: 'title', type: 'text', role: 'saved' },
  tags: { column: 'tags', type: 'text[]', role: 'fixed' },
  dueAt: { column: 'due_at', type: 'timestamptz', role: 'saved' },
  version: { column: 'version', type: 'integer', role: 'version' },
});

describe('a column table', () => {
  it('selects every column under its property name, in the table order', () => {
    expect(columns.select).toBe('tenant_id AS "tenantId", id, title, tags, due_at AS "dueAt", version');
    expect(columns.names).toBe('tenant_id, id, title, tags, due_at, version');
  });

  it('declares a recordset of whole rows, and updates only the saved columns from it', () => {
    expect(columns.recordset).toBe(
      'tenant_id text, id text, title text, tags text[], due_at timestamptz, version integer',
    );
    expect(columns.setFromRecordset).toBe('title = r.title, due_at = r.due_at');
    expect(columns.withRole('fixed').map((c) => c.key)).toEqual(['tags']);
  });

  it('sends a row keyed by column and reads it back from JSON with its dates', () => {
    const row: Row = {
      tenantId: 't',
      id: 'x',
      title: null,
      tags: ['a'],
      dueAt: new Date('2026-01-02T03:04:05.678Z'),
      version: 3,
    };
    const record = columns.toRecord(row);
    expect(record).toEqual({ tenant_id: 't', id: 'x', title: null, tags: ['a'], due_at: row.dueAt, version: 3 });
    // What json_agg of the select list gives: the properties' names, dates as text.
    const json = JSON.parse(JSON.stringify({ ...row }));
    expect(columns.fromJson(json)).toEqual(row);
    expect(columns.fromJson({ ...json, dueAt: null }).dueAt).toBeNull();
  });
});

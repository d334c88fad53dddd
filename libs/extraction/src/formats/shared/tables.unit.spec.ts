import fc from 'fast-check';
import { tableText, toExtractedTable, typedCell } from './tables';

describe('typedCell', () => {
  it('types every safe integer as int_value', () => {
    fc.assert(fc.property(fc.maxSafeInteger(), (n) => expect(typedCell(String(n))).toEqual({ int_value: n })));
  });

  it('types every finite non-integer number as float_value, as JavaScript prints it', () => {
    const fractions = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d));
    fc.assert(fc.property(fractions, (d) => expect(typedCell(String(d))).toEqual({ float_value: d })));
  });

  it('keeps text that only looks numeric as text', () => {
    for (const text of ['007', '1,234', '4.5 kg', '12a', '1.2.3', '', '-', '.', 'e5', '0x1F', 'NaN', 'Infinity']) {
      expect(typedCell(text)).toEqual({ text_value: text });
    }
  });

  it('trims, reads signs and exponents, and keeps a colspan above one', () => {
    expect(typedCell(' 12 ')).toEqual({ int_value: 12 });
    expect(typedCell('-3.', 2)).toEqual({ float_value: -3, colspan: 2 });
    expect(typedCell('1e3')).toEqual({ float_value: 1000 });
    expect(typedCell('0.5', 1)).toEqual({ float_value: 0.5 });
    expect(typedCell('99999999999999999999')).toEqual({ text_value: '99999999999999999999' });
  });
});

describe('tables', () => {
  const table = { title: 'Counts', headers: [[{ text: 'Year' }, { text: '2024', colspan: 2 }]], rows: [[{ text: 'Otter' }, { text: '12' }, { text: ' ' }]] };

  it('keeps header cells as text, types body cells', () => {
    expect(toExtractedTable(table, 'table_3')).toEqual({
      id: 'table_3',
      title: 'Counts',
      headers: [[{ text_value: 'Year' }, { text_value: '2024', colspan: 2 }]],
      rows: [[{ text_value: 'Otter' }, { int_value: 12 }, { text_value: '' }]],
    });
  });

  it('writes a table as text one row a line', () => {
    expect(tableText(table)).toBe('Counts\nYear | 2024\nOtter | 12 |  ');
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExtractedSection, ExtractedTable } from '@lib/extraction';

/** The committed sample files (test/fixtures/files, made by the scripts beside them). */
export const FIXTURES = join(__dirname, '..', 'fixtures', 'files');
export const fixture = (name: string): Buffer => readFileSync(join(FIXTURES, name));

/** The top-level section with this title. */
export const section = (sections: readonly ExtractedSection[], title: string): ExtractedSection | undefined => sections.find((s) => s.title === title);

/** The table every fixture that has one holds (test/fixtures: "Species | Count | Weight"), typed. */
export const FIXTURE_HEADER = [{ text_value: 'Species' }, { text_value: 'Count' }, { text_value: 'Weight' }];
export const FIXTURE_ROWS = [
  [{ text_value: 'Otter' }, { int_value: 12 }, { float_value: 4.5 }],
  [{ text_value: 'Heron' }, { int_value: 7 }, { float_value: 2.25 }],
];
export const FIXTURE_TABLE: ExtractedTable = { id: 'table_1', headers: [FIXTURE_HEADER], rows: FIXTURE_ROWS };

import { boundRecord, MAX_RECORD_TEXT } from './pipeline-run';

describe('a fetched record as a run records it', () => {
  it('keeps a record of ordinary size as it is', () => {
    const record = { recordId: 'a', title: 'A', text: 'short text', metadata: { url: 'https://x.test/a' } };
    expect(boundRecord(record)).toBe(record);
  });

  it('cuts text past the bound and says how long it was, so one huge file cannot make a huge event', () => {
    const bounded = boundRecord({ recordId: 'big.pdf', title: null, text: 'x'.repeat(MAX_RECORD_TEXT + 5), metadata: { s3: { key: 'big.pdf' } } });
    expect(bounded.text.length).toBe(MAX_RECORD_TEXT);
    expect(bounded.metadata).toEqual({ s3: { key: 'big.pdf' }, text_truncated_from: MAX_RECORD_TEXT + 5 });
  });
});

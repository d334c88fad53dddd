import { articleText, lifecycleOf } from './wolken-source';

describe('the Wolken article rules', () => {
  it('reads the lifecycle state from the reported status name; none reported is null (always ingested)', () => {
    expect([{ statusName: 'Published' }, { statusName: 'Retired' }, { articleStatus: 'DRAFT' }, { status: 'Deleted' }, { statusName: 'In review' }, {}].map(lifecycleOf)).toEqual(['published', 'retired', 'draft', 'delete', null, null]);
  });

  it('writes the sections under their headings in reading order, else the description and summary', () => {
    expect(articleText({ articleOtherInfo: { resolution: '<ol><li>Restart</li></ol>', introduction: '<p>The VPN drops.</p>', cause: '' } })).toBe('Introduction\nThe VPN drops.\n\nResolution\nRestart');
    expect(articleText({ description: '<b>Short</b> text', summary: 'In brief' })).toBe('Description\nShort text\n\nSummary\nIn brief');
  });
});

import { PIPELINES } from '@lib/pipelines/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { pipelinesProjection } from './pipelines.projection';

describe('pipelines projection', () => {
  const log = new EventLog();
  const source = { type: 'web', pages_source: { type: 'sitemap', sitemap_urls: ['https://x.test/sitemap.xml'] }, respect_robots_txt: true, requests_per_second: 2, max_concurrent_fetches: 2, max_pages: 10, user_agent: 'ua', max_page_bytes: 65536, excluded_content_types: [] };
  const settings = { name: 'Docs', source, trigger: { type: 'manual' }, transform: { type: 'agent', agent_key: 'a' }, sync_mode: 'incremental', enabled: true, metadata: {}, processing_options: { record_timeout_minutes: 30, max_concurrent_records: 4 }, source_record_metadata: {} };
  log.append('pipeline-docs', 'PipelineCreated', { pipelineId: 'pip_1', key: 'docs', settings, sealedAuth: { v: '1', ct: 'x' }, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('pipeline-docs', 'PipelineUpdated', { pipelineId: 'pip_1', key: 'docs', settings: { ...settings, enabled: false }, replaced: false, updatedAt: '2026-01-02T00:00:00.000Z' });
  log.append('pipeline-gone', 'PipelineCreated', { pipelineId: 'pip_2', key: 'gone', settings, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('pipeline-gone', 'PipelineDeleted', { pipelineId: 'pip_2', key: 'gone', deletedAt: '2026-01-03T00:00:00.000Z' });

  it('keeps the latest settings, drops deleted pipelines, and never copies the sealed credential', async () => {
    const harness = await given(log.events).project(pipelinesProjection);
    const row = await harness.reads.get(PIPELINES, 'docs');
    expect(row).toMatchObject({ enabled: false, source_type: 'web', updated_at: '2026-01-02T00:00:00.000Z' });
    expect(JSON.stringify(row)).not.toContain('sealed');
    expect(await harness.reads.get(PIPELINES, 'gone')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(pipelinesProjection, log.events);
    expect(twice).toEqual(once);
  });
});

import { collection } from '@lib/platform/projections';
import type { PipelineSettings } from '../domain/pipeline';

/**
 * One row per pipeline (projections/pipelines/pipelines), keyed by pipeline key. The sealed credential stays in
 * the stream: whatever runs the source reads it from there.
 */
export type PipelineRow = {
  readonly id: string;
  readonly pipeline_id: string;
  readonly source_type: string;
  readonly enabled: boolean;
  readonly settings: PipelineSettings;
  /** The run holding the pipeline's one slot (the runner's sweep takes these up); null when none. */
  readonly active_run_id: string | null;
  /** When the whole site was last synced (absent on rows written before incremental sync). */
  readonly watermark?: { readonly value: string; readonly updated_at: string } | null;
  readonly created_at: string;
  readonly updated_at: string;
};

export const PIPELINES = collection<PipelineRow>('pipelines');

const MASK = '****';

/** Sets a dot path in a copy-on-write way (the row is never changed). */
function setPath(o: Record<string, unknown>, path: string, value: unknown): void {
  const [head, ...rest] = path.split('.');
  if (rest.length === 0) o[head] = value;
  else setPath((o[head] = { ...((o[head] as Record<string, unknown> | undefined) ?? {}) }), rest.join('.'), value);
}

/** The reference's Pipeline with the spec's extra fields; every credential secret is `****`. */
export function pipelineView(row: PipelineRow): Record<string, unknown> {
  const s = row.settings;
  const { auth, secret_fields: secretFields, ...source } = s.source as typeof s.source & { secret_fields?: readonly string[] };
  for (const path of secretFields ?? []) setPath(source as Record<string, unknown>, path, MASK);
  const maskedAuth = !auth ? undefined : auth.type === 'bearer' ? { type: 'bearer', token: MASK } : auth.type === 'header' ? { type: 'header', header: auth.header, value: MASK } : { ...auth, client_secret: MASK };
  return {
    key: row.id,
    name: s.name,
    ...(s.description !== undefined ? { description: s.description } : {}),
    source: { ...source, ...(maskedAuth ? { auth: maskedAuth } : {}) },
    trigger: s.trigger,
    transform: s.transform,
    sync_mode: s.sync_mode,
    watermark: row.watermark ?? null,
    status: s.enabled ? 'active' : 'paused',
    status_message: null,
    enabled: s.enabled,
    metadata: s.metadata,
    processing_options: s.processing_options,
    source_record_metadata: s.source_record_metadata,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

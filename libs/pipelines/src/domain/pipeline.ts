import { assertNever, conflict, invalid, notFound } from '@lib/platform/kernel';
import type { Problem, WebSourceSettings } from './pipeline-source';
import type { ScimSourceSettings } from './pipeline-scim-source';
import type { S3SourceSettings } from './pipeline-s3-source';
import type { FileShareSourceSettings } from './pipeline-file-share-source';

import type { ConfluenceSourceSettings } from './pipeline-confluence-source';
import type { WolkenKbSourceSettings } from './pipeline-wolken-source';
import type { FluidTopicsSourceSettings } from './pipeline-fluid-topics-source';
import type { SharepointSourceSettings } from './pipeline-sharepoint-source';
import type { BoxSourceSettings } from './pipeline-box-source';
import type { GoogleDriveSourceSettings } from './pipeline-google-drive-source';

/** A source credential's secret as stored: sealed by the edge (AES-256-GCM), never in clear. */
export type Sealed = Readonly<Record<string, string>>;

export type PipelineSource = WebSourceSettings | ScimSourceSettings | S3SourceSettings | FileShareSourceSettings | ConfluenceSourceSettings | WolkenKbSourceSettings | FluidTopicsSourceSettings | SharepointSourceSettings | BoxSourceSettings | GoogleDriveSourceSettings;

/** When a pipeline runs: on demand, every ISO 8601 duration, or at the times of a 5-field cron expression (UTC). */
export type PipelineTrigger = { readonly type: 'manual' } | { readonly type: 'interval'; readonly duration: string } | { readonly type: 'cron'; readonly expression: string };

export interface PipelineProcessingOptions {
  /** Per attempt, 1–180; a record's budget across its retries is twice this. */
  readonly record_timeout_minutes: number;
  readonly max_concurrent_records: number;
}

/** A pipeline's whole configuration (the reference's Pipeline, plus the spec's `processing_options` and `source_record_metadata`). */
export interface PipelineSettings {
  readonly name: string;
  readonly description?: string;
  readonly source: PipelineSource;
  readonly trigger: PipelineTrigger;
  readonly transform: { readonly type: 'agent'; readonly agent_key: string };
  readonly sync_mode: 'incremental' | 'full_refresh';
  readonly enabled: boolean;
  readonly metadata: Readonly<Record<string, string>>;
  readonly processing_options: PipelineProcessingOptions;
  readonly source_record_metadata: Readonly<Record<string, unknown>>;
}

/** A dead letter and its record; the id is derived from the pipeline and the record (one per pair). */
/**
 * What incremental sync keeps of a record: a page's validators and its links when a crawl must follow them
 * unfetched; a SCIM resource's `meta.version` (as `etag`) and `meta.lastModified`.
 */
export interface PageVersion {
  readonly etag?: string;
  readonly lastModified?: string;
  readonly links?: readonly string[];
}

export interface DeadLetterRef {
  readonly recordId: string;
  readonly deadLetterId: string;
}

export const PROCESSING_DEFAULTS: PipelineProcessingOptions = { record_timeout_minutes: 30, max_concurrent_records: 4 };

export type PipelineEvent =
  /** `sealedAuth`: the source credential's secret, AES-256-GCM bound to `pipeline:<pipelineId>`; never in clear. */
  /** `anchorAt`: where interval cadence counts from; `nextDueAt`: the due time whose timer is armed (null: none). */
  | { type: 'PipelineCreated'; data: { pipelineId: string; key: string; settings: PipelineSettings; sealedAuth?: Sealed; anchorAt: string; nextDueAt: string | null; createdAt: string } }
  | { type: 'PipelineUpdated'; data: { pipelineId: string; key: string; settings: PipelineSettings; sealedAuth?: Sealed; replaced: boolean; anchorAt: string; nextDueAt: string | null; updatedAt: string } }
  /** A due time of an interval or cron trigger claimed once; `runId` null: skipped, a run was still in progress. */
  | { type: 'PipelineTriggerFired'; data: { pipelineId: string; key: string; dueAt: string; nextDueAt: string; runId: string | null; firedAt: string } }
  | { type: 'PipelineDeleted'; data: { pipelineId: string; key: string; deletedAt: string } }
  /** A run claimed: one at a time per pipeline (appended at the revision read, so two triggers cannot both win). */
  | { type: 'PipelineRunRequested'; data: { pipelineId: string; key: string; runId: string; triggerType: 'manual' | 'scheduled' | 'retry'; retry: readonly DeadLetterRef[] | null; requestedAt: string } }
  | { type: 'PipelineRunClosed'; data: { pipelineId: string; key: string; runId: string; closedAt: string } }
  /** A record put on the dead letter queue by hand (origin `manual`), or taken off it. */
  | { type: 'PipelineDeadLetterAdded'; data: { pipelineId: string; key: string; deadLetterId: string; sourceRecordId: string; errorMessage: string | null; at: string } }
  | { type: 'PipelineDeadLetterRemoved'; data: { pipelineId: string; key: string; deadLetterId: string; at: string } }
  /**
   * The sync state after a run that walked the whole site (docs/pipelines.md, Incremental sync): `versions` of
   * every page it saw and processed (the whole map: the last event is the state), `gone` the pages of the
   * previous state no longer on the site.
   */
  | { type: 'PipelineSourceSynced'; data: { pipelineId: string; key: string; runId: string; versions: Readonly<Record<string, PageVersion>>; gone: readonly string[]; syncedAt: string } };

export type PipelineState =
  | { readonly status: 'absent' }
  | { readonly status: 'active'; readonly pipelineId: string; readonly key: string; readonly settings: PipelineSettings; readonly sealedAuth?: Sealed; readonly activeRunId?: string; readonly retrying?: readonly string[]; readonly anchorAt: string; readonly nextDueAt: string | null; readonly synced?: { readonly runId: string; readonly versions: Readonly<Record<string, PageVersion>>; readonly at: string } };

export const pipelineFold = {
  initialState: { status: 'absent' } as PipelineState,
  evolve(state: PipelineState, event: PipelineEvent): PipelineState {
    switch (event.type) {
      case 'PipelineCreated':
        return { status: 'active', pipelineId: event.data.pipelineId, key: event.data.key, settings: event.data.settings, ...(event.data.sealedAuth ? { sealedAuth: event.data.sealedAuth } : {}), anchorAt: event.data.anchorAt, nextDueAt: event.data.nextDueAt };
      case 'PipelineUpdated':
        return state.status === 'active' ? { status: 'active', pipelineId: state.pipelineId, key: state.key, settings: event.data.settings, ...(event.data.sealedAuth ? { sealedAuth: event.data.sealedAuth } : {}), ...(state.activeRunId ? { activeRunId: state.activeRunId } : {}), ...(state.synced ? { synced: state.synced } : {}), anchorAt: event.data.anchorAt, nextDueAt: event.data.nextDueAt } : state;
      case 'PipelineTriggerFired':
        return state.status === 'active' ? { ...state, nextDueAt: event.data.nextDueAt } : state;
      case 'PipelineDeleted':
        return { status: 'absent' };
      case 'PipelineRunRequested':
        return state.status === 'active' ? { ...state, activeRunId: event.data.runId, ...(event.data.retry ? { retrying: event.data.retry.map((r) => r.deadLetterId) } : {}) } : state;
      case 'PipelineDeadLetterAdded':
        return state;
      // A dead letter deleted while its retry runs is no longer being retried: it may be added again.
      case 'PipelineDeadLetterRemoved':
        return state.status === 'active' && state.retrying?.includes(event.data.deadLetterId) ? { ...state, retrying: state.retrying.filter((id) => id !== event.data.deadLetterId) } : state;
      case 'PipelineSourceSynced':
        return state.status === 'active' ? { ...state, synced: { runId: event.data.runId, versions: event.data.versions, at: event.data.syncedAt } } : state;
      case 'PipelineRunClosed': {
        if (state.status !== 'active' || state.activeRunId !== event.data.runId) return state;
        const { activeRunId: _closed, retrying: _retried, ...rest } = state;
        return rest;
      }
      default:
        return assertNever(event);
    }
  },
};

export const pipelineNotFound = (key: string) => notFound('pipeline.not_found', `Pipeline "${key}" does not exist`, key);
export const invalidPipeline = ([field, reason]: Problem) => invalid('pipeline.invalid', `Invalid ${field}: ${reason}`, { [field]: reason });

export function decideCreatePipeline(state: PipelineState, pipelineId: string, key: string, settings: PipelineSettings, sealedAuth: Sealed | undefined, nextDueAt: Date | null, now: Date): PipelineEvent[] {
  if (state.status !== 'absent') throw conflict('pipeline.exists', `A pipeline with key "${key}" already exists`);
  return [{ type: 'PipelineCreated', data: { pipelineId, key, settings, ...(sealedAuth ? { sealedAuth } : {}), anchorAt: now.toISOString(), nextDueAt: nextDueAt?.toISOString() ?? null, createdAt: now.toISOString() } }];
}

/** Nothing is appended when the settings and credential are unchanged. */
export function decideUpdatePipeline(state: PipelineState, key: string, settings: PipelineSettings, sealedAuth: Sealed | undefined, replaced: boolean, cadence: { anchorAt: Date; nextDueAt: Date | null }, now: Date): PipelineEvent[] {
  if (state.status !== 'active') throw pipelineNotFound(key);
  if (JSON.stringify(settings) === JSON.stringify(state.settings) && sealedAuth === state.sealedAuth) return [];
  return [{ type: 'PipelineUpdated', data: { pipelineId: state.pipelineId, key, settings, ...(sealedAuth ? { sealedAuth } : {}), replaced, anchorAt: cadence.anchorAt.toISOString(), nextDueAt: cadence.nextDueAt?.toISOString() ?? null, updatedAt: now.toISOString() } }];
}

/**
 * Claims a due time once (a handler run again after a crash finds `nextDueAt` moved on and appends nothing) and
 * asks for a run unless one is still in progress: a due time that finds a run going is skipped, not queued.
 */
export function decideFireTrigger(state: PipelineState, dueAt: Date, nextDueAt: Date, runId: string, now: Date): PipelineEvent[] {
  if (state.status !== 'active' || !state.settings.enabled || state.nextDueAt !== dueAt.toISOString()) return [];
  const busy = state.activeRunId !== undefined;
  const base = { pipelineId: state.pipelineId, key: state.key };
  return [
    { type: 'PipelineTriggerFired', data: { ...base, dueAt: dueAt.toISOString(), nextDueAt: nextDueAt.toISOString(), runId: busy ? null : runId, firedAt: now.toISOString() } },
    ...(busy ? [] : [{ type: 'PipelineRunRequested' as const, data: { ...base, runId, triggerType: 'scheduled' as const, retry: null, requestedAt: now.toISOString() } }]),
  ];
}

export function decideDeletePipeline(state: PipelineState, key: string, now: Date): PipelineEvent[] {
  if (state.status !== 'active') throw pipelineNotFound(key);
  return [{ type: 'PipelineDeleted', data: { pipelineId: state.pipelineId, key, deletedAt: now.toISOString() } }];
}

/** A run is claimed only when none is in progress (the reference's 409). */
export function decideRequestRun(state: PipelineState, key: string, runId: string, triggerType: 'manual' | 'scheduled' | 'retry', retry: readonly DeadLetterRef[] | null, now: Date): PipelineEvent[] {
  if (state.status !== 'active') throw pipelineNotFound(key);
  if (state.activeRunId) throw conflict('pipeline.run_in_progress', `Pipeline "${key}" has a run in progress (${state.activeRunId}); cancel it or wait for it to end`);
  return [{ type: 'PipelineRunRequested', data: { pipelineId: state.pipelineId, key, runId, triggerType, retry, requestedAt: now.toISOString() } }];
}

/** The sync state after a run that walked the whole site; once per run. */
export function decideSourceSynced(state: PipelineState, pipelineId: string, runId: string, versions: Readonly<Record<string, PageVersion>>, now: Date): PipelineEvent[] {
  if (state.status !== 'active' || state.pipelineId !== pipelineId || state.synced?.runId === runId) return [];
  const gone = Object.keys(state.synced?.versions ?? {}).filter((url) => !(url in versions));
  return [{ type: 'PipelineSourceSynced', data: { pipelineId, key: state.key, runId, versions, gone, syncedAt: now.toISOString() } }];
}

/** A dead letter put on the queue by hand: refused while the active run is retrying it (decided on the stream, not a read model, so two requests cannot both pass). */
export function decideAddDeadLetter(state: PipelineState, key: string, deadLetterId: string, sourceRecordId: string, errorMessage: string | null, now: Date): PipelineEvent[] {
  if (state.status !== 'active') return [];
  if (state.retrying?.includes(deadLetterId)) throw conflict('pipeline.dead_letter_retrying', `A dead letter for "${sourceRecordId}" is being retried`);
  return [{ type: 'PipelineDeadLetterAdded', data: { pipelineId: state.pipelineId, key, deadLetterId, sourceRecordId, errorMessage, at: now.toISOString() } }];
}

/** Idempotent: closing a run that is not the active one appends nothing. */
export function decideCloseRun(state: PipelineState, runId: string, now: Date): PipelineEvent[] {
  if (state.status !== 'active' || state.activeRunId !== runId) return [];
  return [{ type: 'PipelineRunClosed', data: { pipelineId: state.pipelineId, key: state.key, runId, closedAt: now.toISOString() } }];
}

/** `trigger`: a shape check, then the refusal of the kinds that have nothing to fire them yet. */
export function triggerProblem(v: unknown): Problem | null {
  if (typeof v !== 'object' || v === null) return ['trigger', 'must be an object with a type: manual, interval or cron'];
  const t = v as Record<string, unknown>;
  if (t.type === 'manual') return Object.keys(t).length === 1 ? null : ['trigger', 'a manual trigger has only a type'];
  if (t.type === 'interval') return typeof t.duration === 'string' && Object.keys(t).length === 2 ? null : ['trigger.duration', 'an interval trigger has a type and an ISO 8601 duration'];
  if (t.type === 'cron') return typeof t.expression === 'string' && Object.keys(t).length === 2 ? null : ['trigger.expression', 'a cron trigger has a type and a 5-field cron expression'];
  return ['trigger.type', 'must be manual, interval or cron'];
}

export function processingProblem(v: unknown): Problem | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return ['processing_options', 'must be an object'];
  const o = v as Record<string, unknown>;
  const extra = Object.keys(o).find((k) => k !== 'record_timeout_minutes' && k !== 'max_concurrent_records');
  if (extra) return [`processing_options.${extra}`, 'is not a processing option'];
  const int = (x: unknown, min: number, max: number) => x === undefined || (typeof x === 'number' && Number.isInteger(x) && x >= min && x <= max);
  if (!int(o.record_timeout_minutes, 1, 180)) return ['processing_options.record_timeout_minutes', 'must be an integer from 1 to 180'];
  if (!int(o.max_concurrent_records, 1, 64)) return ['processing_options.max_concurrent_records', 'must be an integer from 1 to 64'];
  return null;
}

import { collection } from '@lib/platform/projections';
import type { TemplateType } from '../domain/agent-config';
import type { InstructionEvent } from '../domain/instruction';

/**
 * One row per instruction version, keyed `<instruction id>@<version>` (the form the agents read model pins
 * versions in), with `latest` marking each instruction's newest version (projections/instructions). A row per
 * version rather than one per instruction holding its versions: every read wants one version (get, the turn's
 * resolve, a pin check), a version is immutable, and a list is the `latest` rows with no array to rewrite.
 */
export type InstructionRow = {
  readonly id: string;
  readonly instruction_id: string;
  readonly version: number;
  readonly latest: boolean;
  readonly name: string;
  readonly description: string;
  readonly template_type: TemplateType;
  readonly template: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly enabled: boolean;
  /** When the instruction (its first version) was created. */
  readonly created_at: string;
  /** When this version was created. */
  readonly updated_at: string;
  readonly position: number;
};

export const INSTRUCTIONS = collection<InstructionRow>('instructions');

export const instructionRowId = (instructionId: string, version: number): string => `${instructionId}@${version}`;

type VersionCreated = Extract<InstructionEvent, { type: 'InstructionVersionCreated' }>['data'];

export const instructionRow = (d: VersionCreated, position: number): InstructionRow => ({
  id: instructionRowId(d.instructionId, d.version),
  instruction_id: d.instructionId,
  version: d.version,
  latest: true,
  name: d.name,
  description: d.description,
  template_type: d.templateType,
  template: d.template,
  metadata: d.metadata,
  enabled: d.enabled,
  created_at: d.instructionCreatedAt,
  updated_at: d.createdAt,
  position,
});

/** The reference API's Instruction (type `initial`, the only type it has). */
export function instructionView(row: InstructionRow): Record<string, unknown> {
  return {
    id: row.instruction_id,
    type: 'initial',
    name: row.name,
    description: row.description,
    template_type: row.template_type,
    template: row.template,
    version: row.version,
    metadata: row.metadata,
    enabled: row.enabled,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

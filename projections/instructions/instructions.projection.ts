import type { InstructionEvent } from '@lib/agents/events';
import { INSTRUCTIONS, instructionRow, instructionRowId } from '@lib/agents/read-models';
import { assertNever, patch, put, ReadModelProjection, ReadOp, RecordedEvent, remove } from '@lib/platform/projections';

/** Instruction versions, for `/v2/instructions`, the agents' reference checks and the turn's instruction texts. */
export const instructionsProjection: ReadModelProjection = {
  name: 'instructions',
  version: 1,
  target: 'read',
  eventTypes: ['InstructionVersionCreated', 'InstructionVersionDeleted', 'InstructionDeleted'],
  collections: [{ name: INSTRUCTIONS, indexes: [{ fields: ['instruction_id'] }, { fields: ['latest'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as InstructionEvent;
    const { position } = recorded;
    switch (event.type) {
      case 'InstructionVersionCreated': {
        const { instructionId, supersedes } = event.data;
        const previous = supersedes === undefined ? [] : [patch(INSTRUCTIONS, instructionRowId(instructionId, supersedes), { set: { latest: false, position } })];
        return [...previous, put(INSTRUCTIONS, instructionRow(event.data, position))];
      }
      case 'InstructionVersionDeleted': {
        const { instructionId, version, latest } = event.data;
        return [remove(INSTRUCTIONS, instructionRowId(instructionId, version)), patch(INSTRUCTIONS, instructionRowId(instructionId, latest), { set: { latest: true, position } })];
      }
      case 'InstructionDeleted':
        return event.data.versions.map((v) => remove(INSTRUCTIONS, instructionRowId(event.data.instructionId, v)));
      default:
        return assertNever(event);
    }
  },
};

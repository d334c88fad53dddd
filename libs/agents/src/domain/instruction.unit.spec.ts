import { givenEvents } from '@lib/testing';
import { decideCreateInstruction, decideDeleteInstruction, decideDeleteInstructionVersion, decideUpdateInstruction, InstructionContent, InstructionEvent, instructionFold, InstructionUsage } from './instruction';

const day = (d: number) => new Date(Date.UTC(2026, 0, d));
const content: InstructionContent = { name: 'Tone', description: '', templateType: 'velocity', template: 'Be kind', metadata: {}, enabled: true };
const v1: InstructionEvent = { type: 'InstructionVersionCreated', data: { instructionId: 'ins_1', version: 1, ...content, instructionCreatedAt: day(1).toISOString(), createdAt: day(1).toISOString() } };
const v2: InstructionEvent = { type: 'InstructionVersionCreated', data: { instructionId: 'ins_1', version: 2, supersedes: 1, ...content, template: 'Be brief', instructionCreatedAt: day(1).toISOString(), createdAt: day(2).toISOString() } };
const unused: InstructionUsage = { pinnedBy: [], latestUsedBy: [] };

describe('instruction decisions', () => {
  it('creates version 1 once per id', () => {
    givenEvents(instructionFold, []).when((s) => decideCreateInstruction(s, { instructionId: 'ins_1', content }, day(1))).then([v1]);
    givenEvents(instructionFold, [v1]).when((s) => decideCreateInstruction(s, { instructionId: 'ins_1', content }, day(1))).thenFails({ code: 'instruction.id_taken' });
  });

  it('an update is a new version over the latest, keeping what it does not name; one that changes nothing adds none', () => {
    givenEvents(instructionFold, [v1]).when((s) => decideUpdateInstruction(s, { instructionId: 'ins_1', change: { template: 'Be brief' } }, day(2))).then([v2]);
    givenEvents(instructionFold, [v1, v2]).when((s) => decideUpdateInstruction(s, { instructionId: 'ins_1', change: { template: 'Be brief', name: undefined } }, day(3))).then([]);
    givenEvents(instructionFold, []).when((s) => decideUpdateInstruction(s, { instructionId: 'ins_1', change: {} }, day(2))).thenFails({ code: 'instruction.not_found' });
  });

  it('never reuses a version number, even after the latest was deleted', () => {
    const v3: InstructionEvent = { ...v2, data: { ...v2.data, version: 3, supersedes: 2, template: 'x' } };
    const deleted3: InstructionEvent = { type: 'InstructionVersionDeleted', data: { instructionId: 'ins_1', version: 3, latest: 2, deletedAt: day(4).toISOString() } };
    givenEvents(instructionFold, [v1, v2, v3, deleted3])
      .when((s) => decideUpdateInstruction(s, { instructionId: 'ins_1', change: { template: 'y' } }, day(5)))
      .then([{ type: 'InstructionVersionCreated', data: { ...v2.data, version: 4, supersedes: 2, template: 'y', createdAt: day(5).toISOString() } }]);
  });

  it('deletes a version no agent uses, naming the latest left', () => {
    givenEvents(instructionFold, [v1, v2])
      .when((s) => decideDeleteInstructionVersion(s, { instructionId: 'ins_1', version: 2, usage: unused }, day(3)))
      .then([{ type: 'InstructionVersionDeleted', data: { instructionId: 'ins_1', version: 2, latest: 1, deletedAt: day(3).toISOString() } }]);
  });

  it('keeps a version an agent pins, the latest while an agent follows the latest, and the only version', () => {
    const del = (version: number, usage = unused) => (s: typeof instructionFold.initialState) => decideDeleteInstructionVersion(s, { instructionId: 'ins_1', version, usage }, day(3));
    givenEvents(instructionFold, [v1, v2]).when(del(1, { pinnedBy: ['a1'], latestUsedBy: [] })).thenFails({ kind: 'conflict', code: 'instruction.version_in_use', message: expect.stringContaining('a1') });
    givenEvents(instructionFold, [v1, v2]).when(del(2, { pinnedBy: [], latestUsedBy: ['a2'] })).thenFails({ kind: 'conflict', message: expect.stringContaining('a2') });
    givenEvents(instructionFold, [v1, v2]).when(del(1, { pinnedBy: [], latestUsedBy: ['a2'] })).then([{ type: 'InstructionVersionDeleted', data: { instructionId: 'ins_1', version: 1, latest: 2, deletedAt: day(3).toISOString() } }]);
    givenEvents(instructionFold, [v1]).when(del(1)).thenFails({ kind: 'conflict', code: 'instruction.last_version' });
    givenEvents(instructionFold, [v1]).when(del(7)).thenFails({ kind: 'not_found', code: 'instruction.version_not_found' });
  });

  it('deletes an instruction no agent refers to, with every version it had', () => {
    givenEvents(instructionFold, [v1, v2])
      .when((s) => decideDeleteInstruction(s, { instructionId: 'ins_1', usedBy: [] }, day(3)))
      .then([{ type: 'InstructionDeleted', data: { instructionId: 'ins_1', versions: [1, 2], deletedAt: day(3).toISOString() } }]);
    givenEvents(instructionFold, [v1]).when((s) => decideDeleteInstruction(s, { instructionId: 'ins_1', usedBy: ['a1'] }, day(3))).thenFails({ code: 'instruction.in_use' });
  });
});

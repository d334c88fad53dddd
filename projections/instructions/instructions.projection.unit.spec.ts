import { INSTRUCTIONS } from '@lib/agents/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { instructionsProjection } from './instructions.projection';

describe('instructions projection', () => {
  const log = new EventLog();
  const content = { name: 'Tone', description: 'd', templateType: 'velocity', template: 'Hi ${session.metadata.name}', metadata: { team: 'x' }, enabled: true };
  const created = '2026-01-01T00:00:00.000Z';
  log.append('instruction-ins_1', 'InstructionVersionCreated', { instructionId: 'ins_1', version: 1, ...content, instructionCreatedAt: created, createdAt: created });
  log.append('instruction-ins_1', 'InstructionVersionCreated', { instructionId: 'ins_1', version: 2, supersedes: 1, ...content, template: 'Hello', instructionCreatedAt: created, createdAt: '2026-01-02T00:00:00.000Z' });
  log.append('instruction-ins_1', 'InstructionVersionCreated', { instructionId: 'ins_1', version: 3, supersedes: 2, ...content, template: 'Hey', instructionCreatedAt: created, createdAt: '2026-01-03T00:00:00.000Z' });
  log.append('instruction-ins_1', 'InstructionVersionDeleted', { instructionId: 'ins_1', version: 3, latest: 2, deletedAt: '2026-01-04T00:00:00.000Z' });
  log.append('instruction-ins_2', 'InstructionVersionCreated', { instructionId: 'ins_2', version: 1, ...content, instructionCreatedAt: created, createdAt: created });
  log.append('instruction-ins_2', 'InstructionDeleted', { instructionId: 'ins_2', versions: [1], deletedAt: '2026-01-05T00:00:00.000Z' });

  it('keeps a row per live version, the newest marked latest, and drops deleted versions and instructions', async () => {
    const harness = await given(log.events).project(instructionsProjection);
    const rows = (await harness.rows())[INSTRUCTIONS] as { id: string; latest: boolean }[];
    expect(rows.map((r) => [r.id, r.latest])).toEqual([
      ['ins_1@1', false],
      ['ins_1@2', true],
    ]);
    expect(await harness.reads.get(INSTRUCTIONS, 'ins_1@2')).toMatchObject({ instruction_id: 'ins_1', version: 2, template: 'Hello', template_type: 'velocity', created_at: created, updated_at: '2026-01-02T00:00:00.000Z' });
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(instructionsProjection, log.events);
    expect(once).toMatchObject({ [INSTRUCTIONS]: [{ id: 'ins_1@1' }, { id: 'ins_1@2', latest: true }] });
    expect(twice).toEqual(once);
  });
});

import { changedPaths, configDiff, sameConfig } from './revision-diff';

type Config = Parameters<typeof configDiff>[1];
const config = (over: Record<string, unknown> = {}): Config =>
  ({ name: 'a', model: { name: 'm1' }, first_step_name: 'main', steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'Be brief.' }], next_steps: [], reminders: [] } }, tool_configurations: {}, metadata: {}, enabled: true, ...over }) as unknown as Config;

describe('revision diffs', () => {
  it('names the fields an update changed: an instruction by its array, a model as a whole', () => {
    const before = config();
    const after = config({ model: { name: 'm2' }, steps: { main: { instructions: [{ type: 'inline', name: 'i', template: 'Be thorough.' }], next_steps: [], reminders: [] } } });
    const ops = configDiff(before, after);
    expect(ops).toEqual(expect.arrayContaining([{ op: 'replace', path: '/model/name', value: 'm2' }, { op: 'replace', path: '/steps/main/instructions/0/template', value: 'Be thorough.' }]));
    expect(changedPaths(ops)).toEqual(['model', 'steps.main.instructions']);
  });

  it('keeps keys with slashes and tildes readable, and names added and removed fields', () => {
    const ops = configDiff(config({ metadata: { 'a/b': 1 } }), config({ metadata: { 'a/b': 2, '~x': true }, description: 'new' }));
    expect(changedPaths(ops)).toEqual(['description', 'metadata.a/b', 'metadata.~x']);
  });

  it('diffs revision 0 against an empty configuration: every top-level field it set', () => {
    expect(changedPaths(configDiff(undefined, config()))).toEqual(['enabled', 'first_step_name', 'metadata', 'model', 'name', 'steps', 'tool_configurations']);
  });

  it('finds configurations equal whatever their key order', () => {
    const a = config();
    const b = Object.fromEntries(Object.entries(a as unknown as Record<string, unknown>).reverse()) as unknown as Config;
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(b));
    expect(sameConfig(a, b)).toBe(true);
    expect(sameConfig(a, config({ enabled: false }))).toBe(false);
  });
});

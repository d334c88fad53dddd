import { allowedOf, skillRows, skillsPatch, withAllowedSkills } from '../console/src/pages/skills-form';

/** The console's skills section (console/src/pages/agent-skills.tsx): what its rows and ticks send in the PATCH. */
describe('console: the agent form\'s skills', () => {
  const stored = { review: { description: 'Reviews', when_to_use: 'When asked', content: 'Check bugs' }, translate: { description: 'Translates', content: 'Word by word' } };

  it('sends every row, and null for a stored skill removed or renamed', () => {
    const rows = skillRows(stored);
    expect(rows.map((r) => [r.name, r.when_to_use])).toEqual([['review', 'When asked'], ['translate', '']]);
    const renamed = [{ ...rows[0], name: 'audit' }];
    expect(skillsPatch(renamed, Object.keys(stored))).toEqual({ review: null, translate: null, audit: { description: 'Reviews', content: 'Check bugs', when_to_use: 'When asked' } });
    expect(skillsPatch(rows, Object.keys(stored))).toEqual(stored);
    expect(skillsPatch([], [])).toBeUndefined();
  });

  it('sets each step\'s allowed_skills from its ticks (null: all), keeps what the JSON sets, drops skills no row names', () => {
    const allowed = allowedOf({ main: { instructions: [] }, narrow: { instructions: [], allowed_skills: ['translate', 'review'] } });
    expect(allowed).toEqual({ main: null, narrow: ['translate', 'review'] });
    const steps = { main: { instructions: [] }, narrow: { instructions: [] }, own: { instructions: [], allowed_skills: [] } };
    expect(withAllowedSkills(steps, allowed, ['translate'])).toEqual({ main: { instructions: [], allowed_skills: null }, narrow: { instructions: [], allowed_skills: ['translate'] }, own: { instructions: [], allowed_skills: [] } });
  });
});

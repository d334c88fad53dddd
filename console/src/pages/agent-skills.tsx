import { Field } from '../ui';
import { nextRowId, type Allowed, type SkillRow } from './skills-form';

/** Rows of skills to add, edit and remove; each row's errors are the service's `skills.<name>…` field errors. */
export function SkillsEditor({ rows, onChange, errors }: { rows: SkillRow[]; onChange: (rows: SkillRow[]) => void; errors: Record<string, string> }) {
  const errorAt = (field: string): string | undefined => errors[field];
  const edit = (id: number, change: Partial<SkillRow>) => onChange(rows.map((r) => (r.id === id ? { ...r, ...change } : r)));
  return (
    <section aria-labelledby="skills-title">
      <h3 id="skills-title">Skills</h3>
      {errorAt('skills') && (
        <p class="error" role="alert">
          {errorAt('skills')}
        </p>
      )}
      {rows.map((r, i) => (
        <div role="group" aria-label={`Skill ${i + 1}`} key={r.id} class="card">
          <div class="row">
            <Field label="Skill name" error={errorAt(`skills.${r.name}`)}>
              {(id, d) => <input id={id} aria-describedby={d} value={r.name} onInput={(e) => edit(r.id, { name: e.currentTarget.value })} />}
            </Field>
            <Field label="Skill description" error={errorAt(`skills.${r.name}.description`)}>
              {(id, d) => <input id={id} aria-describedby={d} class="wide" value={r.description} onInput={(e) => edit(r.id, { description: e.currentTarget.value })} />}
            </Field>
          </div>
          <Field label="When to use" error={errorAt(`skills.${r.name}.when_to_use`)}>
            {(id, d) => <input id={id} aria-describedby={d} class="wide" value={r.when_to_use} onInput={(e) => edit(r.id, { when_to_use: e.currentTarget.value })} />}
          </Field>
          <Field label="Skill content" error={errorAt(`skills.${r.name}.content`)} hint="Given to the model only when the skill is loaded">
            {(id, d) => <textarea id={id} aria-describedby={d} rows={5} value={r.content} onInput={(e) => edit(r.id, { content: e.currentTarget.value })} />}
          </Field>
          <button type="button" class="link" onClick={() => onChange(rows.filter((x) => x.id !== r.id))}>
            Remove skill {i + 1}
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...rows, { id: nextRowId(), name: '', description: '', when_to_use: '', content: '' }])}>
        Add skill
      </button>
    </section>
  );
}

/** For each step: every skill (allowed_skills absent), or the ones ticked (none ticked: no skill, no invoke_skill tool). */
export function AllowedSkills({ steps, skills, allowed, onChange }: { steps: string[]; skills: string[]; allowed: Allowed; onChange: (allowed: Allowed) => void }) {
  if (!steps.length || !skills.length) return null;
  return (
    <section aria-labelledby="allowed-skills-title">
      <h3 id="allowed-skills-title">Skills each step may use</h3>
      {steps.map((step) => {
        const chosen = allowed[step] ?? null;
        return (
          <fieldset key={step} aria-label={`Skills of step ${step}`} class="row">
            <label>
              <input type="checkbox" checked={chosen === null} onChange={(e) => onChange({ ...allowed, [step]: e.currentTarget.checked ? null : [] })} /> {step}: all skills
            </label>
            {chosen !== null &&
              skills.map((name) => (
                <label key={name}>
                  <input type="checkbox" checked={chosen.includes(name)} onChange={(e) => onChange({ ...allowed, [step]: e.currentTarget.checked ? [...chosen, name] : chosen.filter((n) => n !== name) })} /> {name}
                </label>
              ))}
          </fieldset>
        );
      })}
    </section>
  );
}

import { DomainError } from '@lib/platform';
import { GENERATION_PRESETS } from '../../domain/presets';
import { PromptInput, PromptTemplate } from './prompt-template';

const result = (text: string, document_metadata: Record<string, unknown> = {}, part_metadata: Record<string, unknown> = {}) => ({
  text,
  score: 0.5,
  document_id: `doc-${text.length}`,
  corpus_key: 'c',
  document_metadata,
  part_metadata,
});

const input = (over: Partial<PromptInput> = {}): PromptInput => ({
  query: 'Where do "sea otters" sleep?',
  results: [result('Otters sleep in kelp.\nThey hold "hands".', { title: 'Otters' }), result('Kelp forests need otters.')],
  language: { code: 'eng', name: 'English' },
  ...over,
});

const render = (template: string, over: Partial<PromptInput> = {}) => PromptTemplate.compile(template, 'generation.prompt_template').render(input(over));

function templateProblem(template: string): string {
  try {
    render(template);
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).kind).toBe('invalid');
    return (e as DomainError).details.fieldErrors!['generation.prompt_template'];
  }
  throw new Error('the template rendered');
}

describe('prompt templates', () => {
  it.each(GENERATION_PRESETS.map((p) => [p.name, p.promptTemplate]))('renders the built-in preset %s to messages that number every result', (_name, template) => {
    const { messages, text } = render(template);
    const all = messages.map((m) => m.content).join('\n');
    expect(all).toContain('[1] ');
    expect(all).toContain('Otters sleep in kelp.\nThey hold "hands".');
    expect(all).toContain('[2] ');
    expect(all).toContain('Kelp forests need otters.');
    expect(all).not.toMatch(/\[3\] \S/);
    expect(all).toContain('Where do "sea otters" sleep?');
    expect(all).toContain('Answer in English.');
    expect(all).not.toMatch(/\$vectara|#end|#if/);
    expect(JSON.parse(text)).toEqual(messages);
  });

  it('prints text values JSON-escaped and $esc.java leaves them escaped once, so both reference idioms give valid JSON', () => {
    const { messages } = render('[{"role": "user", "content": "${vectaraQuery} | $esc.java($vectaraQuery) | #foreach($r in $vectaraQueryResults)$r.getText()#end"}]');
    expect(messages).toEqual([{ role: 'user', content: 'Where do "sea otters" sleep? | Where do "sea otters" sleep? | Otters sleep in kelp.\nThey hold "hands".Kelp forests need otters.' }]);
  });

  it('reads properties as Velocity does, escaped too: $r.text, $r.docMetadata().title', () => {
    const { messages } = render('[{"role": "user", "content": "#foreach($r in $vectaraQueryResults)$r.text|$r.docMetadata().title|$r.partMetadata().values|#end"}]', {
      results: [result('say "hi"', { title: 'a "b"', toString: 'x' })],
    });
    expect(messages[0].content).toBe('say "hi"|a "b"|$r.partMetadata().values|');
  });

  it('gives metadata, languages, idx words, output length and loop flags as the reference describes', () => {
    const template = `[#foreach ($qResult in $vectaraQueryResults)
      {"role": "#if($foreach.first)system#{else}user#end", "content": "$vectaraIdxWord[$foreach.index] $qResult.docMetadata().get('title') [$qResult.docMetadata().present()] last=$foreach.last"},
    #end
      {"role": "user", "content": "$vectaraLangCode $vectaraLangName $vectaraOutChars $velocityCount"}
    ]`;
    const { messages } = render(template, { language: { code: 'deu', name: 'German' }, maxResponseCharacters: 300, results: [result('a', { title: 'T' }), result('b')] });
    expect(messages).toEqual([
      { role: 'system', content: 'first T [true] last=false' },
      { role: 'user', content: 'second  [false] last=true' },
      { role: 'user', content: 'deu German 300 $velocityCount' },
    ]);
  });

  it('forgives a trailing comma and raw line breaks inside strings', () => {
    const { messages } = render('[\n#foreach($r in $vectaraQueryResults)\n{"role": "user", "content": "line one\nline two"},\n#end\n]');
    expect(messages).toEqual([
      { role: 'user', content: 'line one\nline two' },
      { role: 'user', content: 'line one\nline two' },
    ]);
  });

  it('refuses templates that are not Velocity, do not render messages, or call what templates may not', () => {
    expect(templateProblem('[{"role": "user", "content": "#if( x"}]')).toMatch(/not valid Velocity/);
    expect(templateProblem('Tell me about $vectaraQuery')).toMatch(/JSON array of \{"role", "content"\} messages, but it is not valid JSON/);
    expect(templateProblem('[{"role": "wizard", "content": "x"}]')).toMatch(/message 0 has role "wizard"/);
    expect(templateProblem('[{"role": "user", "content": 42}]')).toMatch(/message 0 has no text content/);
    expect(templateProblem('[]')).toMatch(/non-empty JSON array/);
    expect(templateProblem('[{"role": "user", "content": "$vectaraQuery.repeat(100000000)"}]')).toMatch(/repeat\(\) is not available/);
    expect(templateProblem('[{"role": "user", "content": "$vectaraQuery.getClass()"}]')).toMatch(/getClass\(\) is not available/);
  });

  it('stops templates that would run or grow without bound', () => {
    expect(templateProblem('#foreach($i in [1..100000000])x#end')).toMatch(/at most 1000 numbers/);
    expect(templateProblem('#set($n = 5)#foreach($i in [1..$n])x#end')).toMatch(/integer literals/);
    // The step bound, or on a machine loaded enough that 200,000 steps take over 2 s, the time bound: stopped either way.
    expect(templateProblem('#foreach($a in [1..999])#foreach($b in [1..999])x#end#end')).toMatch(/more than 200000 steps|rendering took more than 2000 ms/);
    const doubling = `#set($s = "ab")${'#set($s = "$s$s")'.repeat(30)}`;
    expect(templateProblem(doubling)).toMatch(/output grew past/);
    const nested = `#set($l = [1, 2])${'#set($l = [$l, $l])'.repeat(40)}$l`;
    expect(templateProblem(nested)).toMatch(/more than 100000 elements/);
    expect(templateProblem('#macro(loop)#loop()#end#loop()')).toMatch(/rendering stopped/);
    expect(templateProblem('x'.repeat(50_001))).toMatch(/longer than 50000/);
  });
});

describe('chat history in prompts', () => {
  const chatHistory = [
    { query: 'Where do otters sleep?', answer: 'In "kelp" [1].' },
    { query: 'Why?', answer: 'So they do not drift.' },
  ];

  it('puts earlier turns after the system message of every preset, as user/assistant pairs', () => {
    for (const preset of GENERATION_PRESETS) {
      const { messages } = PromptTemplate.compile(preset.promptTemplate, 'generation.generation_preset_name').render(input({ chatHistory }));
      expect(messages[0].role).toBe('system');
      expect(messages.slice(1, 5)).toEqual([
        { role: 'user', content: 'Where do otters sleep?' },
        { role: 'assistant', content: 'In "kelp" [1].' },
        { role: 'user', content: 'Why?' },
        { role: 'assistant', content: 'So they do not drift.' },
      ]);
    }
  });

  it('leaves the history to a template that places $vectaraChatHistory itself', () => {
    const template = '[#foreach ($t in $vectaraChatHistory){"role": "user", "content": "Q: $t.query A: $t.answer"},#end {"role": "user", "content": "$vectaraQuery"}]';
    const { messages } = render(template, { chatHistory });
    expect(messages).toEqual([
      { role: 'user', content: 'Q: Where do otters sleep? A: In "kelp" [1].' },
      { role: 'user', content: 'Q: Why? A: So they do not drift.' },
      { role: 'user', content: 'Where do "sea otters" sleep?' },
    ]);
  });
});

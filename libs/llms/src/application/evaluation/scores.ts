/** Reads scores from an HHEM-compatible answer: `{scores: [..]}`, `[..]`, or HF/TEI `[{label, score}]` lists. */
export function parseHhemScores(body: unknown): number[] {
  const list = Array.isArray(body) ? body : (body as { scores?: unknown } | undefined)?.scores;
  if (!Array.isArray(list)) return [];
  return list.flatMap((item): number[] => {
    if (typeof item === 'number') return [clamp(item)];
    const labels = (Array.isArray(item) ? item : [item]) as { label?: unknown; score?: unknown }[];
    // A classifier's "consistent" class (HHEM's label 1); "inconsistent" is its complement.
    const yes = labels.find((l) => typeof l?.label === 'string' && /^(consistent|entailment|label_1|1)$/i.test(l.label));
    if (yes && typeof yes.score === 'number') return [clamp(yes.score)];
    const no = labels.find((l) => typeof l?.label === 'string' && /^(inconsistent|hallucinated|label_0|0)$/i.test(l.label));
    return no && typeof no.score === 'number' ? [clamp(1 - no.score)] : [];
  });
}

/**
 * The judge's score from free text: a JSON `{"score": x}`, a bare number in [0, 1], or a percentage. The
 * first such value counts; anything else is no score (never a guess).
 */
export function parseJudgeScore(text: string): number | undefined {
  const json = text.match(/"score"\s*:\s*(-?\d+(?:\.\d+)?)/);
  if (json) return inRange(Number(json[1]));
  const percent = text.match(/(\d{1,3}(?:\.\d+)?)\s*%/);
  if (percent) return inRange(Number(percent[1]) / 100);
  for (const m of text.matchAll(/(?<![\d.])(\d+(?:\.\d+)?)(?![\d.])/g)) {
    const n = inRange(Number(m[1]));
    if (n !== undefined) return n;
  }
  return undefined;
}

const clamp = (n: number) => Math.min(1, Math.max(0, n));
const inRange = (n: number) => (Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined);

/** The part of `jstat` (which ships no types) the evaluations use. */
declare module 'jstat' {
  export const jStat: { studentt: { inv(p: number, dof: number): number } };
}

// Facts of the fuzzy matching rule shared by both back ends.

/** A long text carries this many shingles; slot j holds the j-th one. */
export const FUZZY_SHINGLES = 32;
/** A shingle match needs more than half of the slots to agree. */
export const SHINGLE_MATCH_MIN = FUZZY_SHINGLES / 2 + 1;

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

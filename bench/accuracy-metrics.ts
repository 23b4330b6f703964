// Accuracy figures shared by the accuracy benchmark and its experiments.

/** Area under the ROC curve: probability that a random spam scores above a random ham (ties count half). */
export function rocAuc(spamScores: number[], hamScores: number[]): number {
  const all = [...spamScores.map((s) => ({ s, spam: true })), ...hamScores.map((s) => ({ s, spam: false }))].sort((a, b) => a.s - b.s);
  let rankSum = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j < all.length && all[j]!.s === all[i]!.s) j++;
    const avgRank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) if (all[k]!.spam) rankSum += avgRank;
    i = j;
  }
  const ns = spamScores.length;
  const nh = hamScores.length;
  return (rankSum - (ns * (ns + 1)) / 2) / (ns * nh);
}

/** Spam recall when at most `maxFpRate` of the ham may score at or above the threshold. */
export function recallAtFp(spam: number[], ham: number[], maxFpRate: number): { recall: number; threshold: number } {
  const h = [...ham].sort((a, b) => b - a);
  const allowed = Math.floor(maxFpRate * h.length);
  // Threshold just above the (allowed+1)-th highest ham score: strictly greater counts.
  const bar = h[allowed] ?? -Infinity;
  return { recall: spam.filter((s) => s > bar).length / spam.length, threshold: bar };
}

/** The p-th percentile of sorted figures (nearest rank), as every benchmark here reports them. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

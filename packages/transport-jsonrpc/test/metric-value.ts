/** The value of the series `series` (a metric's name and labels) in a Prometheus scrape; 0 when it has not been counted yet. */
export function metricValue(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

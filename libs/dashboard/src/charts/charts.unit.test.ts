import { describe, expect, it } from 'vitest';
import { niceScale, niceStep, scaleY } from './scale.ts';
import { chartTable, stack, stackedBarChart, type ChartCategory, type ChartSeries, type StackedBarInput } from './stacked-bars.ts';
import { element, escapeXml } from './svg.ts';

const SERIES: ChartSeries[] = [
  { key: 'accepted', label: 'Accepted', color: '#0b6b50' },
  { key: 'sending_throttled', label: 'Refused: too fast', color: '#a32121' },
];

const day = (key: string, values: Record<string, number>): ChartCategory => ({ key, label: key.slice(5), longLabel: `day ${key}`, values });

const input = (categories: ChartCategory[], extra: Partial<StackedBarInput> = {}): StackedBarInput => ({
  id: 'sends',
  title: 'Sends per day',
  xLabel: 'Day (UTC)',
  yLabel: 'Sends',
  series: SERIES,
  categories,
  emptyMessage: 'No sends yet in the last 30 days.',
  ...extra,
});

/** The rects of the bars: series, category, value and geometry. */
const bars = (svg: string) =>
  [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="([^"]+)" class="chart-bar" data-series="([^"]+)" data-category="([^"]+)" data-value="(\d+)">/g)].map((m) => ({
    x: Number(m[1]),
    y: Number(m[2]),
    width: Number(m[3]),
    height: Number(m[4]),
    fill: m[5],
    series: m[6],
    category: m[7],
    value: Number(m[8]),
  }));

describe('the value scale', () => {
  it('rounds steps to the nearest 1, 2 or 5 times a power of ten, never below 1', () => {
    expect([0.3, 1, 1.2, 2, 2.5, 4, 7, 12, 30, 180, 4_100].map(niceStep)).toEqual([1, 1, 1, 2, 2, 5, 10, 10, 50, 200, 5_000]);
  });

  it('runs from 0 to a round maximum at or above the largest value', () => {
    expect(niceScale(412)).toEqual({ max: 500, step: 100, ticks: [0, 100, 200, 300, 400, 500] });
    expect(niceScale(7)).toEqual({ max: 8, step: 2, ticks: [0, 2, 4, 6, 8] });
    expect(niceScale(1)).toEqual({ max: 1, step: 1, ticks: [0, 1] });
    expect(niceScale(100)).toEqual({ max: 100, step: 20, ticks: [0, 20, 40, 60, 80, 100] });
  });

  it('gives an empty chart an axis of 0 to 1 rather than dividing by zero', () => {
    expect(niceScale(0)).toEqual({ max: 1, step: 1, ticks: [0, 1] });
    expect(niceScale(Number.NaN)).toEqual({ max: 1, step: 1, ticks: [0, 1] });
  });

  it('places values upwards from the bottom', () => {
    const y = scaleY(niceScale(100), 240, 200);
    expect([y(0), y(50), y(100)]).toEqual([240, 140, 40]);
  });
});

describe('stacking', () => {
  it('stacks the series bottom up in their order, skipping zeros', () => {
    expect(stack(day('2026-11-03', { accepted: 5, sending_throttled: 2 }), SERIES)).toEqual([
      { series: 'accepted', value: 5, y0: 0, y1: 5 },
      { series: 'sending_throttled', value: 2, y0: 5, y1: 7 },
    ]);
    expect(stack(day('2026-11-03', { sending_throttled: 3 }), SERIES)).toEqual([{ series: 'sending_throttled', value: 3, y0: 0, y1: 3 }]);
  });

  it('counts a missing, negative or non-number value as 0', () => {
    expect(stack(day('2026-11-03', { accepted: -4, sending_throttled: Number.NaN }), SERIES)).toEqual([]);
  });

  it('tables the same numbers, with totals per row, per series and overall', () => {
    const table = chartTable(input([day('2026-11-03', { accepted: 5, sending_throttled: 2 }), day('2026-11-04', { accepted: 1 })]), 'Day');
    expect(table.headers).toEqual(['Day', 'Accepted', 'Refused: too fast', 'Total']);
    expect(table.rows).toEqual([
      { key: '2026-11-03', label: 'day 2026-11-03', cells: [5, 2], total: 7 },
      { key: '2026-11-04', label: 'day 2026-11-04', cells: [1, 0], total: 1 },
    ]);
    expect(table.totals).toEqual([6, 2, 8]);
  });
});

describe('the chart', () => {
  it('draws one segment per non-zero value, stacked, as tall as its share of the scale', () => {
    const chart = stackedBarChart(input([day('2026-11-03', { accepted: 6, sending_throttled: 2 }), day('2026-11-04', {}), day('2026-11-05', { accepted: 10 })]));
    expect(chart.empty).toBe(false);
    const rects = bars(chart.html);
    expect(rects.map((r) => [r.category, r.series, r.value, r.fill])).toEqual([
      ['2026-11-03', 'accepted', 6, '#0b6b50'],
      ['2026-11-03', 'sending_throttled', 2, '#a32121'],
      ['2026-11-05', 'accepted', 10, '#0b6b50'],
    ]);
    // Scale 0..10 over 200 px: 6 → 120 px, 2 → 40 px stacked on top of it, 10 → the whole height.
    const [accepted, refused, full] = rects;
    expect(accepted!.height).toBe(120);
    expect(refused!.height).toBe(40);
    expect(refused!.y + refused!.height).toBeCloseTo(accepted!.y, 5);
    expect(full!.height).toBe(200);
    expect(full!.y).toBe(40);
    // The bars sit in their own bands, left to right.
    expect(accepted!.x).toBeLessThan(full!.x);
  });

  it('has a title and description for screen readers, axis labels, gridlines and a legend', () => {
    const chart = stackedBarChart(input([day('2026-11-03', { accepted: 3 }), day('2026-11-04', { sending_throttled: 1 })]));
    expect(chart.html).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" id="sends" class="chart" role="img" aria-labelledby="sends-title sends-desc"/);
    expect(chart.html).toContain('<title id="sends-title">Sends per day</title>');
    expect(chart.html).toContain('<desc id="sends-desc">Sends per day, from day 2026-11-03 to day 2026-11-04. Totals: Accepted: 3; Refused: too fast: 1.</desc>');
    expect(chart.html).toContain('>Day (UTC)</text>');
    expect(chart.html).toContain('transform="rotate(-90)"');
    expect(chart.html).toContain('>Sends</text>');
    expect(chart.html).toMatch(/<g class="chart-legend-item" data-series="accepted"><rect [^>]*fill="#0b6b50"\/><text [^>]*>Accepted<\/text><\/g>/);
    expect(chart.html).toMatch(/<g class="chart-legend-item" data-series="sending_throttled">.*>Refused: too fast<\/text>/);
    // Each segment says what it is when pointed at.
    expect(chart.html).toContain('<title>day 2026-11-03 · Accepted: 3</title>');
    // No inline style or script: the CSP allows neither.
    expect(chart.html).not.toMatch(/style=|<script|<style/);
  });

  it('uses the description it is given', () => {
    const chart = stackedBarChart(input([day('2026-11-03', { accepted: 3 })], { description: 'Three sends.' }));
    expect(chart.html).toContain('<desc id="sends-desc">Three sends.</desc>');
  });

  it('labels every n-th category under the axis', () => {
    const categories = Array.from({ length: 30 }, (_, i) => day(`2026-11-${String(i + 1).padStart(2, '0')}`, { accepted: 1 }));
    const chart = stackedBarChart(input(categories, { labelEvery: 7 }));
    const labels = [...chart.html.matchAll(/<text [^>]*aria-hidden="true">(\d\d-\d\d)<\/text>/g)].map((m) => m[1]);
    expect(labels).toEqual(['11-01', '11-08', '11-15', '11-22', '11-29']);
  });

  it('says the empty message instead of drawing an empty chart', () => {
    const chart = stackedBarChart(input([day('2026-11-03', {}), day('2026-11-04', { accepted: 0 })]));
    expect(chart.empty).toBe(true);
    expect(chart.html).toBe('<p class="chart-empty" id="sends-empty">No sends yet in the last 30 days.</p>');
    expect(chart.table.totals).toEqual([0, 0, 0]);
  });

  it('escapes every label, title and message', () => {
    const evil = '<script>alert("x")</script> & \'quoted\'';
    const series: ChartSeries[] = [{ key: 'a"b', label: evil, color: '#000' }];
    const categories = [{ key: '<k>', label: evil, longLabel: evil, values: { 'a"b': 2 } }];
    const chart = stackedBarChart({ ...input(categories), series, title: evil, xLabel: evil, yLabel: evil, id: 'x"y', labelEvery: 1 });
    expect(chart.html).not.toContain('<script>');
    expect(chart.html).not.toContain('"x")');
    expect(chart.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;');
    expect(chart.html).toContain('data-series="a&quot;b"');
    expect(chart.html).toContain('data-category="&lt;k&gt;"');
    expect(chart.html).toContain('id="x&quot;y"');
    const empty = stackedBarChart({ ...input([]), emptyMessage: evil, id: '<i>' });
    expect(empty.html).toBe('<p class="chart-empty" id="&lt;i&gt;-empty">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;</p>');
  });

  it('wraps a long legend onto more rows and makes room for them', () => {
    const many: ChartSeries[] = Array.from({ length: 8 }, (_, i) => ({ key: `s${i}`, label: `A fairly long series label ${i}`, color: '#123456' }));
    const one = stackedBarChart({ ...input([day('2026-11-03', { s0: 1 })]), series: many.slice(0, 1) });
    const eight = stackedBarChart({ ...input([day('2026-11-03', { s0: 1 })]), series: many });
    const height = (svg: string) => Number(/ height="([\d.]+)" font-family/.exec(svg)![1]);
    expect(height(eight.html)).toBeGreaterThan(height(one.html));
    const ys = new Set([...eight.html.matchAll(/<g class="chart-legend-item" data-series="s\d"><rect x="[\d.]+" y="([\d.]+)"/g)].map((m) => m[1]));
    expect(ys.size).toBeGreaterThan(1);
  });
});

describe('svg text', () => {
  it('escapes the five XML specials', () => {
    expect(escapeXml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('writes attributes escaped, numbers to a tenth, and leaves out null ones', () => {
    expect(element('rect', { x: 1.234, y: 2, title: 'a"b', gone: null })).toBe('<rect x="1.2" y="2" title="a&quot;b"/>');
    expect(element('text', { x: 0 }, 'hi')).toBe('<text x="0">hi</text>');
  });
});

// A stacked bar chart as inline SVG, rendered on the server (no library, nothing fetched, no
// script): one bar per category (a day, a week), one coloured segment per series (accepted, each
// refusal code), stacked from the bottom in the order the series are given. Colours are SVG
// presentation attributes (the CSP forbids inline styles, and the chart must read without the
// stylesheet too). It is readable without sight: a <title> and <desc> name the chart and sum it
// up, every segment has its own <title> ("Tue 3 Nov 2026 · Accepted: 12"), and the same numbers
// come back as a table (`table`) for the page to show below the chart. With nothing to show it is
// no chart at all, but the message the caller gives ("No sends yet").
import { niceScale, scaleY, type Scale } from './scale.ts';
import { count } from '../format.ts';
import { element, escapeXml, px } from './svg.ts';

export interface ChartSeries {
  key: string;
  /** As the legend, the table's header and each segment's tooltip say it. */
  label: string;
  /** The segment's fill, a CSS colour (e.g. "#0b6b50"). */
  color: string;
}

export interface ChartCategory {
  key: string;
  /** Short, under the axis ("3 Nov"). */
  label: string;
  /** Whole, in the table and the tooltips ("Tue 3 Nov 2026"). */
  longLabel: string;
  /** The value of each series (by key); a series missing here counts 0. */
  values: Readonly<Record<string, number>>;
}

export interface StackedBarInput {
  /** Prefix of the chart's element ids: unique on the page. */
  id: string;
  title: string;
  /** Said to screen readers after the title; by default the period and each series' total. */
  description?: string;
  xLabel: string;
  yLabel: string;
  series: readonly ChartSeries[];
  categories: readonly ChartCategory[];
  /** What the page says instead of the chart when every value is 0. */
  emptyMessage: string;
  /** Label every n-th category under the axis (default: about ten labels). */
  labelEvery?: number;
}

/** One segment of a stacked bar: from y0 to y1 in value units. */
export interface Segment {
  series: string;
  value: number;
  y0: number;
  y1: number;
}

export interface ChartTable {
  caption: string;
  /** The category column's header, then one per series, then "Total". */
  headers: string[];
  rows: Array<{ key: string; label: string; cells: number[]; total: number }>;
  /** Per series, then the grand total. */
  totals: number[];
}

export interface Chart {
  /** The SVG, or the empty message as a paragraph: markup to write as is (everything in it is escaped). */
  html: string;
  empty: boolean;
  table: ChartTable;
}

/** The value of a series in a category: a count, so anything else (missing, negative, NaN) is 0. */
const valueOf = (category: ChartCategory, series: string): number => {
  const value = category.values[series];
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
};

/** The segments of one bar, bottom up, in the order of `series`; series at 0 have none. */
export function stack(category: ChartCategory, series: readonly ChartSeries[]): Segment[] {
  const segments: Segment[] = [];
  let base = 0;
  for (const s of series) {
    const value = valueOf(category, s.key);
    if (value === 0) continue;
    segments.push({ series: s.key, value, y0: base, y1: base + value });
    base += value;
  }
  return segments;
}

/** The numbers of the chart as a table: one row per category, one column per series, with totals. */
export function chartTable(input: Pick<StackedBarInput, 'title' | 'series' | 'categories'>, categoryHeader: string): ChartTable {
  const rows = input.categories.map((c) => {
    const cells = input.series.map((s) => valueOf(c, s.key));
    return { key: c.key, label: c.longLabel, cells, total: cells.reduce((a, b) => a + b, 0) };
  });
  const totals = input.series.map((_, i) => rows.reduce((sum, r) => sum + r.cells[i]!, 0));
  return {
    caption: input.title,
    headers: [categoryHeader, ...input.series.map((s) => s.label), 'Total'],
    rows,
    totals: [...totals, totals.reduce((a, b) => a + b, 0)],
  };
}

const WIDTH = 720;
const PLOT_HEIGHT = 200;
const MARGIN = { left: 60, right: 12, top: 40 };
/** Below the plot: the category labels, then the x axis' label. */
const X_AXIS_SPACE = 46;
const LEGEND_ROW = 20;
/** A rough width of a character of the 12px system font, to lay out the legend without measuring. */
const CHAR_WIDTH = 6.2;

interface LegendItem {
  series: ChartSeries;
  x: number;
  row: number;
}

/** Legend items left to right, wrapping to a new row when the next would not fit. */
function layoutLegend(series: readonly ChartSeries[], width: number): { items: LegendItem[]; rows: number } {
  const items: LegendItem[] = [];
  let x = 0;
  let row = 0;
  for (const s of series) {
    const itemWidth = 18 + s.label.length * CHAR_WIDTH + 16;
    if (x > 0 && x + itemWidth > width) {
      row += 1;
      x = 0;
    }
    items.push({ series: s, x, row });
    x += itemWidth;
  }
  return { items, rows: series.length === 0 ? 0 : row + 1 };
}

/** The default description: the period, then each series' total. */
function describe(input: StackedBarInput, table: ChartTable): string {
  const first = input.categories[0]?.longLabel ?? '';
  const last = input.categories[input.categories.length - 1]?.longLabel ?? '';
  const totals = input.series.map((s, i) => `${s.label}: ${count(table.totals[i]!)}`).join('; ');
  return `${input.title}, from ${first} to ${last}. Totals: ${totals}.`;
}

export function stackedBarChart(input: StackedBarInput): Chart {
  const table = chartTable(input, input.xLabel);
  const grandTotal = table.totals[table.totals.length - 1]!;
  if (grandTotal === 0) {
    return { html: `<p class="chart-empty" id="${escapeXml(input.id)}-empty">${escapeXml(input.emptyMessage)}</p>`, empty: true, table };
  }

  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const bottom = MARGIN.top + PLOT_HEIGHT;
  const legend = layoutLegend(input.series, plotWidth);
  const legendTop = bottom + X_AXIS_SPACE + 10;
  const height = legendTop + legend.rows * LEGEND_ROW + 6;
  const largest = Math.max(...input.categories.map((c) => stack(c, input.series).reduce((top, s) => Math.max(top, s.y1), 0)));
  const scale: Scale = niceScale(largest);
  const y = scaleY(scale, bottom, PLOT_HEIGHT);
  const band = plotWidth / Math.max(1, input.categories.length);
  const barWidth = Math.max(1, band * 0.7);
  const labelEvery = input.labelEvery ?? Math.max(1, Math.ceil(input.categories.length / 10));
  const colors = new Map(input.series.map((s) => [s.key, s]));
  const id = input.id;

  const parts: string[] = [];
  parts.push(element('title', { id: `${id}-title` }, escapeXml(input.title)));
  parts.push(element('desc', { id: `${id}-desc` }, escapeXml(input.description ?? describe(input, table))));
  // The visible title, top left.
  parts.push(element('text', { x: MARGIN.left, y: 20, 'font-size': 14, 'font-weight': 600, fill: '#1c2430', class: 'chart-title' }, escapeXml(input.title)));

  // Gridlines and the value labels beside them.
  const grid = scale.ticks.map((tick) => {
    const at = y(tick);
    return (
      element('line', { x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: at, y2: at, stroke: tick === 0 ? '#5b6675' : '#d9dee5', 'stroke-width': 1 }) +
      element('text', { x: MARGIN.left - 6, y: at + 4, 'text-anchor': 'end', fill: '#5b6675' }, escapeXml(count(tick)))
    );
  });
  parts.push(element('g', { class: 'chart-grid', 'aria-hidden': 'true' }, grid.join('')));

  // The bars: one group per category, one rect per segment, each with its own tooltip.
  const bars = input.categories.map((category, i) => {
    const x = MARGIN.left + i * band + (band - barWidth) / 2;
    const segments = stack(category, input.series).map((segment) => {
      const series = colors.get(segment.series)!;
      const top = y(segment.y1);
      return element(
        'rect',
        { x, y: top, width: barWidth, height: Math.max(0.5, y(segment.y0) - top), fill: series.color, class: 'chart-bar', 'data-series': segment.series, 'data-category': category.key, 'data-value': String(segment.value) },
        element('title', {}, escapeXml(`${category.longLabel} · ${series.label}: ${count(segment.value)}`)),
      );
    });
    const label =
      i % labelEvery === 0
        ? element('text', { x: MARGIN.left + i * band + band / 2, y: bottom + 16, 'text-anchor': 'middle', fill: '#5b6675', 'aria-hidden': 'true' }, escapeXml(category.label))
        : '';
    return element('g', { 'data-category': category.key }, segments.join('') + label);
  });
  parts.push(element('g', { class: 'chart-bars' }, bars.join('')));

  // Axis labels: the categories' under the labels, the values' turned up the left side.
  parts.push(element('text', { x: MARGIN.left + plotWidth / 2, y: bottom + 38, 'text-anchor': 'middle', fill: '#1c2430', class: 'chart-axis-label' }, escapeXml(input.xLabel)));
  parts.push(
    element('text', { x: -(MARGIN.top + PLOT_HEIGHT / 2), y: 16, transform: 'rotate(-90)', 'text-anchor': 'middle', fill: '#1c2430', class: 'chart-axis-label' }, escapeXml(input.yLabel)),
  );

  // The legend, under the x axis' label.
  const legendItems = legend.items.map((item) =>
    element(
      'g',
      { class: 'chart-legend-item', 'data-series': item.series.key },
      element('rect', { x: MARGIN.left + item.x, y: legendTop + item.row * LEGEND_ROW, width: 12, height: 12, fill: item.series.color }) +
        element('text', { x: MARGIN.left + item.x + 18, y: legendTop + item.row * LEGEND_ROW + 10, fill: '#1c2430' }, escapeXml(item.series.label)),
    ),
  );
  parts.push(element('g', { class: 'chart-legend' }, legendItems.join('')));

  const svg = element(
    'svg',
    {
      xmlns: 'http://www.w3.org/2000/svg',
      id,
      class: 'chart',
      role: 'img',
      'aria-labelledby': `${id}-title ${id}-desc`,
      viewBox: `0 0 ${WIDTH} ${px(height)}`,
      width: WIDTH,
      height,
      'font-family': 'system-ui, -apple-system, Segoe UI, Roboto, sans-serif',
      'font-size': 12,
    },
    parts.join(''),
  );
  return { html: svg, empty: false, table };
}

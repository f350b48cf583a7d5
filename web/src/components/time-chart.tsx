import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import { compactNumber } from '../lib/format';

/** Tick steps for counts: whole numbers only (no "0.5 errors"). */
const COUNT_INCREMENTS = [
  1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 1e4, 2e4, 2.5e4, 5e4, 1e5, 2e5, 2.5e5, 5e5, 1e6, 2e6, 2.5e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8,
  5e8, 1e9,
];

export const PALETTE = ['#2563eb', '#d97706', '#059669', '#dc2626', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#6b7280'];

interface TimeChartProps {
  title: string;
  xs: number[];
  labels: string[];
  values: number[][];
  height?: number;
}

/**
 * A uPlot line chart over time, in the browser's zone (uPlot's default), as wide as its
 * container: a ResizeObserver keeps it fitting from a phone to a wide screen.
 */
export function TimeChart({ title, xs, labels, values, height = 220 }: TimeChartProps) {
  const ref = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const container = ref.current;
    if (container === null) return;
    const options: uPlot.Options = {
      width: Math.max(container.clientWidth, 200),
      height,
      series: [
        { label: 'Time' },
        ...labels.map((label, index) => ({
          label,
          stroke: PALETTE[index % PALETTE.length] ?? '#6b7280',
          width: 1.5,
          points: { show: xs.length <= 60 },
          value: (_plot: uPlot, value: number | null) => (value === null ? '—' : value.toLocaleString()),
        })),
      ],
      axes: [
        { stroke: '#4b5563', grid: { stroke: '#eef0f3' } },
        {
          stroke: '#4b5563',
          grid: { stroke: '#eef0f3' },
          size: 48,
          incrs: COUNT_INCREMENTS,
          values: (_plot, ticks) => ticks.map((tick) => compactNumber(tick)),
        },
      ],
      scales: { x: { time: true }, y: { range: (_plot, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
    };
    const plot = new uPlot(options, [xs, ...values], container);
    const observer = new ResizeObserver(() => {
      const width = Math.max(container.clientWidth, 200);
      if (width !== plot.width) plot.setSize({ width, height });
    });
    observer.observe(container);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [xs, labels, values, height]);

  return (
    <figure className="chart">
      <figcaption>
        <h2>{title}</h2>
      </figcaption>
      <div ref={ref} className="chart-plot" />
    </figure>
  );
}

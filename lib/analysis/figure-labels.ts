/**
 * Analysis stage, point labels that never overprint (issue 37 §3; METHOD.md §9): the scatter figures
 * (tokens vs EX, the peers' EX-vs-tokens panels) name each point. Vega-Lite draws a text mark where it
 * is told, so the kit places the labels itself, in the panel's pixel space: each label goes to the
 * first free spot beside its point — right, then left, then further up or down in steps of one line,
 * with a leader line back to the point once it left the point's row — free meaning its box (width
 * ≈ characters × font size × CHAR_WIDTH, height one line) overlaps no label placed before it, no
 * point's marker and stays inside the panel. Points that coincide share one label listing their
 * names. The figure then draws the panel with fixed scale domains (no `nice`), so pixels and data map
 * linearly both ways.
 * @module
 */

/** Width of a character of DejaVu Sans in ems, generously (its digits and lower case average about 0.6 em; m, w and capitals reach 0.8–1). */
export const CHAR_WIDTH = 0.68;
/** Gap between a point's centre and its label's near edge, px. */
const GAP = 8;
/** Half the side of the box kept free around each point's marker, px. */
const MARKER = 6;
/** Free margin kept around every label box, px. */
const PAD = 4;

/** A point to label, in pixels of its panel (y down); `text` one line, or several (drawn one under the other). */
export interface LabelPoint {
  x: number;
  y: number;
  text: string | readonly string[];
}

/** Where a label goes: its anchor (the near edge's middle), which side, and whether a leader line joins it to its point. */
export interface PlacedLabel {
  x: number;
  y: number;
  align: "left" | "right";
  leader: boolean;
}

interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const overlap = (a: Box, b: Box) => Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) > 0 && Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0) > 0;
const overlapArea = (a: Box, b: Box) => Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0)) * Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));

/** Estimated width of `text` at `fontSize` px (its longest line). */
export function textWidth(text: string | readonly string[], fontSize: number): number {
  return Math.max(0, ...(typeof text === "string" ? [text] : text).map((t) => [...t].length * fontSize * CHAR_WIDTH));
}

/** Line height of labels at `fontSize` px. */
export function lineHeight(fontSize: number): number {
  return fontSize + 3;
}

/**
 * Label placement in a `width` × `height` panel; one PlacedLabel per point, in the points' order.
 * Deterministic: points are placed left to right (ties top to bottom), each at its first free
 * candidate; when none is free, the candidate with the least overlap.
 */
export function placeLabels(points: readonly LabelPoint[], width: number, height: number, fontSize: number): PlacedLabel[] {
  const line = lineHeight(fontSize);
  const markers: Box[] = points.map((p) => ({ x0: p.x - MARKER, y0: p.y - MARKER, x1: p.x + MARKER, y1: p.y + MARKER }));
  const placed: Box[] = [];
  const out: PlacedLabel[] = new Array(points.length);
  const order = points.map((_, i) => i).sort((i, j) => points[i].x - points[j].x || points[i].y - points[j].y || i - j);
  const steps = Math.ceil(height / line);
  for (const i of order) {
    const p = points[i];
    const w = textWidth(p.text, fontSize) + PAD;
    // the anchor y is the middle of the first line; a label of n lines reaches n − 1 lines below it
    const below = (typeof p.text === "string" ? 0 : Math.max(0, p.text.length - 1)) * line;
    let best: { label: PlacedLabel; cost: number } | null = null;
    search: for (let k = 0; k <= 4 * steps; k++) {
      // 0, −1, +1, −2, +2, … lines away from the point's row (up first)
      const dy = k === 0 ? 0 : (k % 2 === 1 ? -1 : 1) * Math.ceil(k / 2) * line;
      for (const align of ["left", "right"] as const) {
        const x = align === "left" ? p.x + GAP : p.x - GAP;
        const y = p.y + dy;
        const box: Box = align === "left" ? { x0: x, y0: y - line / 2, x1: x + w, y1: y + line / 2 + below } : { x0: x - w, y0: y - line / 2, x1: x, y1: y + line / 2 + below };
        const outside = Math.max(0, -box.x0) + Math.max(0, box.x1 - width) + Math.max(0, -box.y0) + Math.max(0, box.y1 - height);
        const hits = [...placed, ...markers].reduce((s, b) => s + overlapArea(box, b), 0);
        const cost = outside * 1000 + hits;
        const label: PlacedLabel = { x, y, align, leader: dy !== 0 };
        if (cost === 0 && !placed.some((b) => overlap(box, b))) {
          best = { label, cost };
          placed.push(box);
          break search;
        }
        if (best === null || cost < best.cost) best = { label, cost };
      }
    }
    if (best!.cost > 0) {
      const b = best!.label;
      placed.push(b.align === "left" ? { x0: b.x, y0: b.y - line / 2, x1: b.x + w, y1: b.y + line / 2 + below } : { x0: b.x - w, y0: b.y - line / 2, x1: b.x, y1: b.y + line / 2 + below });
    }
    out[i] = best!.label;
  }
  return out;
}

/** A linear scale domain [lo, hi] around `values`, padded by `pad` of its range (at least `minSpan` wide in all). */
export function paddedDomain(values: readonly number[], pad: number, minSpan: number): [number, number] {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const span = Math.max(hi - lo, minSpan);
  const mid = (lo + hi) / 2;
  const half = span / 2 + span * pad;
  return [mid - half, mid + half];
}

/** Pixel ↔ data of one linear axis of `pixels` length over `domain` (y axes flip: pixel 0 at the top). */
export function linearAxis(domain: readonly [number, number], pixels: number, flip: boolean): { toPixel: (v: number) => number; toData: (px: number) => number } {
  const [d0, d1] = domain;
  const scale = pixels / (d1 - d0);
  return flip
    ? { toPixel: (v) => pixels - (v - d0) * scale, toData: (px) => d0 + (pixels - px) / scale }
    : { toPixel: (v) => (v - d0) * scale, toData: (px) => d0 + px / scale };
}

// Test helper: the boxes of the text marks of a Vega SVG (issue 37 §3: labels never overprint). Walks
// the SVG's <g> and <text> tags, summing the groups' translate(x, y) transforms, and estimates each
// text's box from its anchor point: width = characters of its longest line × font size × CHAR_WIDTH
// (figure-labels.ts), height one line (font size + 3) per line, vertically from its baseline up by
// 0.8 of the font size and down by 0.2, plus its further lines.
import { CHAR_WIDTH } from "../../lib/analysis/figure-labels.ts";

export interface TextBox {
  text: string;
  /** The class of the group mark holding it (e.g. "mark-text role-mark layer_3_marks"). */
  group: string;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const translate = (attrs: string): [number, number] => {
  const m = /transform="translate\(([-\d.e]+),\s*([-\d.e]+)\)/.exec(attrs);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
};

const unescape = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");

/** Every non-empty, unrotated <text> of `svg` whose enclosing mark group's class matches `groupClass`, as an estimated box in SVG pixels. */
export function svgTextBoxes(svg: string, groupClass: RegExp = /role-mark/): TextBox[] {
  const boxes: TextBox[] = [];
  const stack: { dx: number; dy: number; cls: string }[] = [{ dx: 0, dy: 0, cls: "" }];
  const tag = /<(\/?)(g|text)\b([^>]*?)(\/?)>/g;
  let m: RegExpExecArray | null;
  while ((m = tag.exec(svg)) !== null) {
    const [, close, name, attrs, selfClose] = m;
    const top = stack[stack.length - 1];
    if (name === "g") {
      if (close) stack.pop();
      else if (!selfClose) {
        const [dx, dy] = translate(attrs);
        const cls = /class="([^"]*)"/.exec(attrs)?.[1] ?? top.cls;
        stack.push({ dx: top.dx + dx, dy: top.dy + dy, cls });
      }
      continue;
    }
    if (close || selfClose) continue;
    const end = svg.indexOf("</text>", tag.lastIndex);
    const inner = svg.slice(tag.lastIndex, end);
    tag.lastIndex = end + "</text>".length;
    if (/rotate\(/.test(attrs) || !groupClass.test(top.cls)) continue;
    const lines = (/<tspan/.test(inner) ? [...inner.matchAll(/<tspan[^>]*>([^<]*)<\/tspan>/g)].map((t) => t[1]) : [inner]).map(unescape).filter((l) => l.trim() !== "");
    if (lines.length === 0) continue;
    const size = Number(/font-size="([\d.]+)px"/.exec(attrs)?.[1] ?? "10");
    const width = Math.max(...lines.map((l) => [...l].length)) * size * CHAR_WIDTH;
    const [tx, ty] = translate(attrs);
    const x = top.dx + tx;
    const y = top.dy + ty;
    const anchor = /text-anchor="(start|middle|end)"/.exec(attrs)?.[1] ?? "start";
    const x0 = anchor === "start" ? x : anchor === "end" ? x - width : x - width / 2;
    boxes.push({ text: lines.join("\n"), group: top.cls, x0, y0: y - 0.8 * size, x1: x0 + width, y1: y + 0.2 * size + (lines.length - 1) * (size + 3) });
  }
  return boxes;
}

/** The pairs of boxes that overlap (by more than `tolerance` px both ways). */
export function overlappingBoxes(boxes: readonly TextBox[], tolerance = 0.5): [TextBox, TextBox][] {
  const out: [TextBox, TextBox][] = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i];
      const b = boxes[j];
      if (Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) > tolerance && Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0) > tolerance) out.push([a, b]);
    }
  }
  return out;
}

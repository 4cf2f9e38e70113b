/**
 * Analysis stage, figure rendering adapter (METHOD.md §9): Vega-Lite spec → SVG with vega 5's
 * headless `View` (renderer "none") → PNG with @resvg/resvg-js, using font files found on disk
 * (resvg draws no text at all without fonts, so a missing font is an error, not a blank label).
 * @module
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import type { TopLevelSpec } from "vega-lite";
import { MeritError } from "../errors.ts";

/** Where Debian/Ubuntu (fonts-dejavu-core) and most Linux distributions keep font files. */
const FONT_DIRS = ["/usr/share/fonts", "/usr/local/share/fonts"];
/** The family the figure specs ask for (figures.ts CONFIG.font); also the fallback for generic families. */
const FAMILY = "DejaVu Sans";

/** Render a Vega-Lite spec to an SVG string (deterministic for a given spec). */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  // vega, vega-lite and resvg load on first use, not with this module (~0.5 s of `merit report`'s start-up; issue 22 §2)
  const [vega, { compile }] = await Promise.all([import("vega"), import("vega-lite")]);
  const runtime = vega.parse(compile(spec).spec);
  const view = new vega.View(runtime, { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Options of {@link svgToPng}. */
export interface PngOptions {
  /** Pixel density multiplier. @default 2 */
  scale?: number;
  /** Font files to use instead of searching the font directories. */
  fontFiles?: string[];
}

/** Rasterise an SVG to PNG bytes. Throws MeritError when no font file exists (install fonts-dejavu-core). */
export function svgToPng(svg: string, opts: PngOptions = {}): Buffer {
  const fontFiles = opts.fontFiles ?? findFontFiles();
  if (fontFiles.length === 0) {
    throw new MeritError(
      `figure rendering: no .ttf/.otf font under ${FONT_DIRS.join(" or ")}, so PNG text would be blank; install one (Debian: apt-get install fonts-dejavu-core) or pass fontFiles`,
    );
  }
  const { Resvg } = createRequire(import.meta.url)("@resvg/resvg-js") as typeof import("@resvg/resvg-js");
  const resvg = new Resvg(svg, {
    fitTo: { mode: "zoom", value: opts.scale ?? 2 },
    font: { loadSystemFonts: false, fontFiles, defaultFontFamily: FAMILY, sansSerifFamily: FAMILY },
  });
  return resvg.render().asPng();
}

/** Render a Vega-Lite spec straight to PNG bytes. */
export async function renderPng(spec: TopLevelSpec, opts: PngOptions = {}): Promise<Buffer> {
  return svgToPng(await renderSvg(spec), opts);
}

/**
 * Font files to load: DejaVu Sans and DejaVu Sans Mono when installed (what the specs and the
 * example-episode figure's SQL name), otherwise every
 * .ttf/.otf under the font directories, in sorted order so the choice is stable.
 */
export function findFontFiles(): string[] {
  const all: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ttf|otf)$/i.test(entry.name)) all.push(path);
    }
  };
  for (const dir of FONT_DIRS) if (existsSync(dir)) walk(dir);
  all.sort();
  const dejavu = all.filter((p) => /DejaVuSans(Mono)?(-Bold)?\.ttf$/.test(p));
  return dejavu.length > 0 ? dejavu : all;
}

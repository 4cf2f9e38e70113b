// Types for the one natural sub-module the kit imports (natural ships types only for its package root).
declare module "natural/lib/natural/tokenizers/regexp_tokenizer.js" {
  export class RegexpTokenizer {
    constructor(opts?: { pattern?: RegExp; gaps?: boolean; discardEmpty?: boolean });
    tokenize(text: string): string[];
  }
}

/**
 * The kit's side of the prompt for remote engines (METHOD.md §6.4, §11.8; issue 16 §2): the GGUF's own
 * chat template applied to one user message, tokenised and left-truncated to `maxInputTokens`, and
 * generated token ids decoded back to text — exactly what LlamaBackend evaluates in process
 * (llama-backend.ts `promptTokens`, `generate`), so an OpenAI-compatible server that is given these
 * ids sees the same prompt and the decoded text equals the in-process text. Only the vocabulary of
 * the GGUF is loaded (no weights), so a laptop can drive a cluster of servers with a 7B model.
 * @module
 */
import type { LlamaModel, Token } from "node-llama-cpp";
import { MeritError } from "../errors.ts";
import { jinjaChatTemplate, modelChatTemplate, type ChatTemplate } from "./chat-template.ts";
import { sha256File } from "../file-hash.ts";
import { decodeOutput, truncatePrompt } from "./llama-backend.ts";
import { llamaRuntime } from "./llama-runtime.ts";
import { loadModelChecked } from "./model-file.ts";

export interface PromptTokenizerOptions {
  /** The GGUF the server runs (or any GGUF with the same tokenizer and template). */
  modelPath: string;
  /** Prompt tokens kept after left truncation (METHOD.md §6.4). @default 4096 */
  maxInputTokens?: number;
  /** `"left"` drops the prompt's beginning; `"error"` refuses (METHOD.md §11.5). @default "left" */
  truncate?: "left" | "error";
  /** Jinja template overriding the GGUF's own. */
  chatTemplate?: string;
  /** SHA-256 of the GGUF when known; computed otherwise. */
  modelHash?: string;
}

/** Chat template + tokenizer of one GGUF, vocabulary only. */
export class PromptTokenizer {
  readonly model: LlamaModel;
  readonly template: ChatTemplate;
  /** SHA-256 of the GGUF (the identity of tokenizer and template). */
  readonly modelHash: string;
  readonly maxInputTokens: number;
  readonly truncate: "left" | "error";
  /** true when the template is the GGUF's own. */
  readonly ggufTemplate: boolean;
  constructor(model: LlamaModel, template: ChatTemplate, modelHash: string, maxInputTokens: number, truncate: "left" | "error", ggufTemplate: boolean) {
    this.model = model;
    this.template = template;
    this.modelHash = modelHash;
    this.maxInputTokens = maxInputTokens;
    this.truncate = truncate;
    this.ggufTemplate = ggufTemplate;
  }

  /** Prompt token ids after templating and left truncation, plus how many were dropped. */
  encode(userMessage: string): { tokens: number[]; truncated: number } {
    return truncatePrompt(this.model.tokenize(this.template.render(userMessage), true), this.maxInputTokens, this.truncate);
  }

  /** Text of generated ids with special tokens skipped and a final end-of-generation token dropped (METHOD.md §6.4). */
  decode(output: readonly number[]): string {
    return decodeOutput(this.model, output as readonly Token[]);
  }

  async close(): Promise<void> {
    if (!this.model.disposed) await this.model.dispose();
  }
}

/** Loads the vocabulary and chat template of a GGUF. @throws ModelFileError when the file cannot be used */
export async function loadPromptTokenizer(options: PromptTokenizerOptions): Promise<PromptTokenizer> {
  const llama = await llamaRuntime(false);
  const model = await loadModelChecked(llama, options.modelPath, { vocabOnly: true, gpuLayers: 0 });
  try {
    const template = options.chatTemplate === undefined ? await modelChatTemplate(model, options.modelPath) : await jinjaChatTemplate(options.chatTemplate, model);
    const modelHash = options.modelHash ?? (await sha256File(options.modelPath));
    const maxInputTokens = options.maxInputTokens ?? 4096;
    if (!Number.isInteger(maxInputTokens) || maxInputTokens < 1) throw new MeritError(`maxInputTokens must be a positive integer, got ${maxInputTokens}`);
    return new PromptTokenizer(model, template, modelHash, maxInputTokens, options.truncate ?? "left", options.chatTemplate === undefined);
  } catch (error) {
    await model.dispose();
    throw error;
  }
}

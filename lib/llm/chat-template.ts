/**
 * Chat templating for the generation backend (METHOD.md §6.4, §11.8): the GGUF's OWN Jinja template
 * (`tokenizer.chat_template`) applied to exactly one user message with the generation prompt
 * appended, as Hugging Face `apply_chat_template(..., add_generation_prompt=True)` does. No system
 * message is passed, so Qwen2.5's template inserts its own default system prompt and
 * node-llama-cpp's default system prompt (which `LlamaChatSession` would add) never appears.
 * @module
 */
import type { LlamaModel } from "node-llama-cpp";
import { MeritError } from "../errors.ts";

/** Renders one user message through a Jinja chat template into the exact prompt text. */
export interface ChatTemplate {
  /** The Jinja source, as stored in the GGUF. */
  readonly source: string;
  render(userMessage: string): string;
}

/**
 * A ChatTemplate from Jinja source (node-llama-cpp's Jinja engine; no system prompt is injected).
 * Templates that print `bos_token`/`eos_token` need `model`, whose token texts replace them.
 */
export async function jinjaChatTemplate(source: string, model?: LlamaModel): Promise<ChatTemplate> {
  const { JinjaTemplateChatWrapper, SpecialToken } = await import("node-llama-cpp"); // on first use (start-up, issue 22 §2)
  const wrapper = new JinjaTemplateChatWrapper({
    template: source,
    convertUnsupportedSystemMessagesToUserMessages: false,
    joinAdjacentMessagesOfTheSameType: false,
  });
  return {
    source,
    render(userMessage: string): string {
      // An empty model turn at the end is node-llama-cpp's spelling of add_generation_prompt = true.
      const { contextText } = wrapper.generateContextState({
        chatHistory: [
          { type: "user", text: userMessage },
          { type: "model", response: [] },
        ],
      });
      // Literal template text (incl. "<|im_start|>") and user text come back as strings; builtin
      // tokens (bos_token, eos_token) as SpecialToken, which are spelled with the model's own text.
      return contextText.values
        .map((value) => {
          if (typeof value === "string") return value;
          if (value instanceof SpecialToken) {
            if (!model) throw new MeritError(`the chat template prints the ${value.value} token; render it with a loaded model`);
            return model.detokenize(value.tokenize(model.tokenizer), true);
          }
          return value.value;
        })
        .join("");
    },
  };
}

/** The chat template embedded in a loaded GGUF. @throws MeritError when the file has none. */
export async function modelChatTemplate(model: LlamaModel, modelPath: string): Promise<ChatTemplate> {
  const source = model.fileInfo.metadata.tokenizer?.chat_template;
  if (typeof source !== "string" || source === "") {
    throw new MeritError(`${modelPath}: the GGUF has no tokenizer.chat_template; use an instruct model GGUF that embeds its chat template (see models/README.md)`);
  }
  return jinjaChatTemplate(source, model);
}

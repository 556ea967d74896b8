import { countTokens as o200kCount } from "gpt-tokenizer/encoding/o200k_base";

/** The one tokenizer every token figure is counted with. */
export const TOKENIZER = "o200k_base";

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : o200kCount(text);
}

import { countTokens as o200kCount } from "gpt-tokenizer/encoding/o200k_base";

export { TOKENIZER } from "./tokenizer-name.js";

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : o200kCount(text);
}
